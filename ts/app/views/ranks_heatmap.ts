/**
 * The Ranks view's rank x step heat map: one cell per rank and step, coloured by the chosen
 * figure (step time, computing, communication wait), the ranks ordered and labelled by their
 * parallel group (the `rank_steps` analysis), so a slow rank is the odd cell of its group's
 * block.  Below it the same numbers as a table (readable, selectable, testable).  Where the
 * figures are the vendor's per-rank summaries rather than the rank's own tasks, the cell's
 * tooltip and the table say so.
 */
import { clear, h } from '../dom';
import { Chart, esc } from '../widgets/chart';
import { fmtUs, isNum, txt } from '../widgets/format';
import { empty } from '../widgets/parts';
import type { Translate } from '../widgets/format';

export const METRICS = ['step_us', 'computing_us', 'comm_wait_us'] as const;
type Row = Record<string, unknown>;

/** The ranks in drawing order (group, then rank) with the group label shown at a group's first rank. */
export function rankOrder(rows: Row[]): { ranks: number[]; group: Map<number, string> } {
  const group = new Map<number, string>();
  const order = new Map<number, number>();
  for (const r of rows) {
    const rank = Number(r.rank);
    group.set(rank, String(r.group ?? ''));
    order.set(rank, Number(r.group_order ?? 0));
  }
  const ranks = Array.from(order.keys()).sort((a, b) => (order.get(a)! - order.get(b)!) || a - b);
  return { ranks, group };
}

export function heatmap(t: Translate, rows: Row[], charts: Chart[]): HTMLElement {
  if (!rows.length) {
    return empty(t('ui.ranks.none'));
  }
  const { ranks, group } = rankOrder(rows);
  const steps = Array.from(new Set(rows.map(r => (r.step === null || r.step === undefined ? '-' : String(r.step)))));
  const stepIx = new Map(steps.map((s, i) => [s, i]));
  const rankIx = new Map(ranks.map((r, i) => [r, i]));
  const picker = h('select', { class: 'pi-heat-metric', 'aria-label': t('ui.ranks.metric') });
  for (const m of METRICS) {
    picker.appendChild(h('option', { value: m }, t(`ui.col.${m}`)));
  }
  const many = ranks.length > 64;
  // one pixel row per rank above 64 ranks (1,024 ranks in a 1,100 px chart, every rank a line of
  // its group's block); wheel or drag on the chart zooms into a band of ranks.  Taller canvases
  // cost seconds to clear and raster (three layers of 1,376 x 4,000 px froze the page 2.4 s)
  const chart = new Chart(Math.min(2200, 70 + ranks.length * (many ? 1 : 24)), 'pi-heat-chart');
  charts.push(chart);
  const grid = h('div', { class: 'pi-heat-table' });
  const label = (rank: number, i: number) => {
    const g = group.get(rank) ?? '';
    const first = i === 0 || (group.get(ranks[i - 1]) ?? '') !== g;
    return first && g ? `${g}  ${t('ui.ranks.rank', { rank })}` : t('ui.ranks.rank', { rank });
  };
  const draw = () => {
    const metric = picker.value;
    const data = rows.map(r => [
      stepIx.get(r.step === null || r.step === undefined ? '-' : String(r.step)) ?? 0,
      rankIx.get(Number(r.rank)) ?? 0,
      isNum(r[metric]) ? (r[metric] as number) : null,
      String(r.source ?? '')
    ]);
    const vals = data.map(d => d[2]).filter(isNum) as number[];
    chart.set({
      animation: false,
      grid: { left: 8, right: 130, top: 30, bottom: 8, containLabel: true },
      tooltip: {
        formatter: (q: any) =>
          `${esc(t('ui.ranks.rank', { rank: ranks[q.value[1]] }))} · ${esc(t('ui.ranks.step', { step: steps[q.value[0]] }))}` +
          `<br/>${esc(t(`ui.col.${metric}`))} ${esc(fmtUs(q.value[2]))}<br/>${esc(group.get(ranks[q.value[1]]) ?? '')}` +
          `<br/>${esc(t('ui.ranks.tier', { source: q.value[3] }))}`
      },
      xAxis: { type: 'category', data: steps, name: t('ui.ranks.steps'), nameLocation: 'middle', nameGap: 22, position: 'top' },
      yAxis: {
        type: 'category',
        data: ranks.map((r, i) => label(r, i)),
        inverse: true,
        axisLabel: { show: !many, interval: 0 }
      },
      visualMap: {
        dimension: 2,
        min: vals.length ? Math.min(...vals) : 0,
        max: vals.length ? Math.max(...vals) : 1,
        calculable: true,
        right: 0,
        top: 'middle',
        itemHeight: 100,
        formatter: (v: number) => fmtUs(v),
        inRange: { color: ['#f7fbff', '#fdae6b', '#d94801'] }
      },
      dataZoom: many ? [{ type: 'inside', yAxisIndex: 0, filterMode: 'weakFilter' }] : [],
      series: [{ type: 'heatmap', data, progressive: 0, itemStyle: { borderColor: 'rgba(128,128,128,0.35)', borderWidth: many ? 0 : 1 } }]
    });
    clear(grid);
    if (many) {
      return; // 1,024 ranks: the table would be the page; the chart and its tooltip carry the figures
    }
    const head = h('tr', {}, h('th', {}, t('ui.ranks.group')), h('th', {}, t('ui.ranks.rank_col')), steps.map(s => h('th', { class: 'pi-num' }, t('ui.ranks.step', { step: s }))));
    const body = ranks.map(rank =>
      h(
        'tr',
        { 'data-rank': rank },
        h('td', {}, group.get(rank) ?? ''),
        h('th', {}, String(rank)),
        steps.map(s => {
          const r = rows.find(x => Number(x.rank) === rank && (x.step === null || x.step === undefined ? '-' : String(x.step)) === s);
          const v = r && isNum(r[metric]) ? fmtUs(r[metric] as number) : '';
          return h('td', { class: 'pi-num', 'data-step': s, 'data-source': r ? txt(r.source) : '', title: r ? t('ui.ranks.tier', { source: String(r.source ?? '') }) : '' }, v);
        })
      )
    );
    grid.appendChild(h('table', { class: 'pi-table pi-heat-grid' }, h('thead', {}, head), h('tbody', {}, body)));
  };
  picker.addEventListener('change', draw);
  const box = h(
    'div',
    { class: 'pi-heat' },
    h('div', { class: 'pi-controls' }, h('label', { class: 'pi-control' }, h('span', {}, t('ui.ranks.metric')), picker)),
    h('p', { class: 'pi-note' }, t('ui.ranks.heat_note')),
    chart.el,
    grid
  );
  draw();
  return box;
}
