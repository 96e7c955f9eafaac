/**
 * The Overview's picture of the steps, sized to their number.  Up to `BARS_MAX` rank-steps: one
 * stacked bar each (compute, communication not overlapped, device idle, bubble).  Above that a
 * bar per rank-step becomes a 3,000 px page, so: one rank -> the step time as a line over the
 * steps with its parts stacked under it; several ranks -> a rank x step heat map of the chosen
 * figure (colours anchored at 0).  Either way the exact numbers stay one click away in the
 * step table below the chart.
 */
import { h } from '../dom';
import { barOption, Chart, esc, PALETTE, trimZeros } from './chart';
import { fmtUs, isNum, tr, txt } from './format';
import type { Translate } from './format';

/** the step parts stacked, in this order; they add up to step_us */
export const PARTS = ['computing_us', 'comm_not_overlapped_us', 'free_us', 'bubble_us'];
/** at most this many rank-steps are drawn as bars (28 px each) */
export const BARS_MAX = 24;
/** figures the heat map can colour by */
export const HEAT_METRICS = ['step_us', ...PARTS];

type Row = Record<string, any>;

/** Which picture `rows` (step_breakdown rows with a step time) get. */
export function stepsKind(rows: Row[]): 'bars' | 'line' | 'heatmap' {
  if (rows.length <= BARS_MAX) {
    return 'bars';
  }
  return new Set(rows.map(r => r.rank)).size > 1 ? 'heatmap' : 'line';
}

const stepKey = (r: Row) => (r.step === null || r.step === undefined ? '-' : String(r.step));

/** The chart of `rows` (see the module doc); `charts` keeps it for disposal. */
export function stepsChart(t: Translate, rows: Row[], charts: Chart[]): HTMLElement {
  const kind = stepsKind(rows);
  const parts = PARTS.filter(p => rows.some(r => isNum(r[p]) && r[p] > 0));
  if (kind === 'bars') {
    const chart = new Chart(Math.max(140, 60 + rows.length * 28), 'pi-steps-bars');
    charts.push(chart);
    const labels = rows.map(r => tr(t, 'ui.overview.rank_step', String(r.label), { rank: txt(r.rank), step: txt(r.step ?? '-') }));
    chart.set(barOption(labels, parts.map(p => ({ name: t(`ui.col.${p}`), values: rows.map(r => (isNum(r[p]) ? r[p] : null)) })), fmtUs, true));
    chart.el.dataset.kind = kind;
    return chart.el;
  }
  if (kind === 'line') {
    const chart = new Chart(300, 'pi-steps-line');
    charts.push(chart);
    const steps = rows.map(stepKey);
    chart.set({
      animation: false,
      grid: { left: 8, right: 24, top: 36, bottom: 40, containLabel: true },
      legend: { top: 0, type: 'scroll' },
      dataZoom: [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 4 }],
      tooltip: {
        trigger: 'axis',
        formatter: (ps: any[]) =>
          [esc(tr(t, 'ui.overview.step_n', `step ${ps[0]?.name}`, { step: ps[0]?.name ?? '' }))]
            .concat(ps.map(p => `${p.marker}${esc(p.seriesName)}: ${esc(fmtUs(p.value))}`))
            .join('<br/>')
      },
      xAxis: { type: 'category', data: steps, name: t('ui.overview.steps_axis'), nameLocation: 'middle', nameGap: 24 },
      yAxis: { type: 'value', axisLabel: { formatter: (v: number) => trimZeros(fmtUs(v)) } },
      series: [
        ...parts.map((p, i) => ({
          type: 'line',
          name: t(`ui.col.${p}`),
          stack: 'parts',
          areaStyle: { opacity: 0.55 },
          lineStyle: { width: 0 },
          showSymbol: false,
          color: PALETTE[i],
          data: rows.map(r => (isNum(r[p]) ? r[p] : null))
        })),
        {
          type: 'line',
          name: t('ui.col.step_us'),
          showSymbol: rows.length <= 200,
          symbolSize: 4,
          color: '#1b1b1f',
          lineStyle: { width: 1.5 },
          data: rows.map(r => (isNum(r.step_us) ? r.step_us : null))
        }
      ]
    });
    chart.el.dataset.kind = kind;
    return chart.el;
  }
  return heatmap(t, rows, charts);
}

function heatmap(t: Translate, rows: Row[], charts: Chart[]): HTMLElement {
  const ranks = Array.from(new Set(rows.map(r => Number(r.rank)))).sort((a, b) => a - b);
  const steps = Array.from(new Set(rows.map(stepKey)));
  const rankIx = new Map(ranks.map((r, i) => [r, i]));
  const stepIx = new Map(steps.map((s, i) => [s, i]));
  const picker = h('select', { class: 'pi-steps-metric', 'aria-label': t('ui.ranks.metric') });
  for (const m of HEAT_METRICS.filter(m => m === 'step_us' || rows.some(r => isNum(r[m]) && r[m] > 0))) {
    picker.appendChild(h('option', { value: m }, t(`ui.col.${m}`)));
  }
  const many = ranks.length > 64;
  const chart = new Chart(Math.min(2400, 80 + ranks.length * (many ? 4 : 22)), 'pi-steps-heat');
  charts.push(chart);
  const draw = () => {
    const metric = picker.value;
    const data = rows.map(r => [stepIx.get(stepKey(r)) ?? 0, rankIx.get(Number(r.rank)) ?? 0, isNum(r[metric]) ? r[metric] : null]);
    const vals = data.map(d => d[2]).filter(isNum) as number[];
    chart.el.dataset.cells = String(data.length);
    chart.set({
      animation: false,
      grid: { left: 8, right: 120, top: 30, bottom: 8, containLabel: true },
      tooltip: {
        formatter: (q: any) =>
          `${esc(t('ui.ranks.rank', { rank: ranks[q.value[1]] }))} · ${esc(t('ui.ranks.step', { step: steps[q.value[0]] }))}` +
          `<br/>${esc(t(`ui.col.${metric}`))} ${esc(fmtUs(q.value[2]))}`
      },
      xAxis: { type: 'category', data: steps, name: t('ui.overview.steps_axis'), nameLocation: 'middle', nameGap: 22, position: 'top' },
      yAxis: { type: 'category', data: ranks.map(r => t('ui.ranks.rank', { rank: r })), inverse: true, axisLabel: { show: !many } },
      visualMap: {
        dimension: 2,
        min: 0, // anchored at 0: a 3% spread between ranks must look like one
        max: vals.length ? Math.max(...vals) : 1,
        calculable: true,
        right: 0,
        top: 'middle',
        itemHeight: 100,
        formatter: (v: number) => fmtUs(v),
        inRange: { color: ['#f7fbff', '#fdae6b', '#d94801'] }
      },
      series: [{ type: 'heatmap', data, progressive: 0, itemStyle: { borderColor: 'rgba(128,128,128,0.35)', borderWidth: many ? 0 : 1 } }]
    });
  };
  picker.addEventListener('change', draw);
  chart.el.dataset.kind = 'heatmap';
  draw();
  return h(
    'div',
    { class: 'pi-steps-heatmap' },
    h('div', { class: 'pi-controls' }, h('label', { class: 'pi-control' }, h('span', {}, t('ui.ranks.metric')), picker)),
    chart.el
  );
}
