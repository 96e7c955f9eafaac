/**
 * Communication: per collective type and rank the elapsed time in its parts (transit, wait —
 * synchronisation inside it — and idle: they add up to elapsed), the bandwidth per transport type
 * (on-chip LOCAL copies left out), the rank-to-rank matrix (heatmap coloured from 0, and numbers),
 * links slower than their transport's median, and every collective with a jump to it on the
 * timeline.  Two filters narrow every part of the page: one step (the analyses' `step`
 * parameter) and one collective type (rows of that type; the matrix by its op type).  They are
 * in the page address (`step`, `coll`).
 */
import { append, clear, fmtBytes, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { barOption, Chart, esc } from '../widgets/chart';
import { displayName, fmtCell, fmtUs, isNum, num } from '../widgets/format';
import { empty, errorBox, fill, section } from '../widgets/parts';
import { DataTable, payloadTable } from '../widgets/table';
import type { View, ViewContext, ViewState } from './types';

const LINKS = ['hccs_gbps', 'rdma_gbps', 'pcie_gbps', 'sdma_gbps', 'sio_gbps'];
const METRICS = ['bandwidth_gbps', 'bytes', 'transit_us'];

interface Cell {
  src: number;
  dst: number;
  bytes: number;
  transit_us: number;
  transports: Set<string>;
}

/** Link rows summed per (source, destination): bandwidth = bytes / transit time. */
export function matrixCells(rows: Record<string, any>[]): Cell[] {
  const m = new Map<string, Cell>();
  for (const r of rows) {
    if (!isNum(r.src_rank) || !isNum(r.dst_rank)) {
      continue;
    }
    const k = `${r.src_rank}>${r.dst_rank}`;
    const c = m.get(k) || { src: r.src_rank, dst: r.dst_rank, bytes: 0, transit_us: 0, transports: new Set<string>() };
    c.bytes += isNum(r.bytes) ? r.bytes : 0;
    c.transit_us += isNum(r.transit_us) ? r.transit_us : 0;
    if (r.transport) {
      c.transports.add(String(r.transport));
    }
    m.set(k, c);
  }
  return Array.from(m.values());
}

function value(c: Cell, metric: string): number | null {
  if (metric === 'bytes') {
    return c.bytes;
  }
  if (metric === 'transit_us') {
    return c.transit_us;
  }
  return c.transit_us > 0 ? c.bytes / (c.transit_us * 1e3) : null;
}

/** The matrix's op type (lower case, no `hcom_` prefix or trailing `_`) of a collective type. */
export function matrixType(type: string): string {
  return type
    .toLowerCase()
    .replace(/^hcom_/, '')
    .replace(/_+$/, '');
}

/** `p` with only the rows of collective type `type` (all rows when empty). */
function ofType(p: AnalysisPayload, type: string, col = 'type'): AnalysisPayload {
  if (!type) {
    return p;
  }
  const keep = col === 'op_type' ? (v: unknown) => matrixType(String(v ?? '')) === matrixType(type) : (v: unknown) => v === type;
  const idx = p.rows.map((r, i) => (keep(r[col]) ? i : -1)).filter(i => i >= 0);
  const exact = p.exact ? Object.fromEntries(Object.entries(p.exact).map(([k, v]) => [k, idx.map(i => v[i])])) : undefined;
  return { ...p, rows: idx.map(i => p.rows[i]), exact };
}

export function create(): View {
  const charts: Chart[] = [];
  let apply: ((s?: ViewState) => void) | null = null;
  return {
    show(state?: ViewState) {
      apply?.(state);
    },
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const filter: { step: string; type: string } = { step: '', type: '' };
      let metric = METRICS[0]; // the matrix's measure
      const report = () =>
        ctx.setState?.({
          step: filter.step === '' ? undefined : Number(filter.step),
          collective: filter.type || undefined,
          metric: metric !== METRICS[0] ? metric : undefined
        });
      const stepSel = h('select', { class: 'pi-comm-step', 'aria-label': t('ui.communication.step') });
      const typeSel = h('select', { class: 'pi-comm-type', 'aria-label': t('ui.communication.collective') });
      const option = (s: HTMLSelectElement, v: string, text: string) => s.appendChild(h('option', { value: v }, text));
      option(stepSel, '', t('ui.communication.all_steps'));
      for (const s of ctx.profile.steps) {
        option(stepSel, String(s), t('ui.ranks.step', { step: s }));
      }
      option(typeSel, '', t('ui.communication.all_types'));
      const body = h('div', { class: 'pi-comm-body' });
      const controls = h(
        'div',
        { class: 'pi-controls pi-comm-filters' },
        h('label', { class: 'pi-control' }, h('span', {}, t('ui.communication.step')), stepSel),
        h('label', { class: 'pi-control' }, h('span', {}, t('ui.communication.collective')), typeSel)
      );
      append(el, [controls, body]);
      let types: string[] | null = null;
      const load = () => {
        charts.splice(0).forEach(c => c.dispose());
        report();
        return fill(body, t, () => build(filter), errorBox);
      };
      apply = (s?: ViewState) => {
        if (!s) {
          return; // a tab click: the filters stay as they are
        }
        const step = typeof s.step === 'number' ? String(s.step) : '';
        const type = typeof s.collective === 'string' ? s.collective : '';
        const m = s.metric && METRICS.includes(s.metric) ? s.metric : METRICS[0];
        if (step !== filter.step || type !== filter.type || m !== metric) {
          metric = m;
          filter.step = step;
          filter.type = type;
          stepSel.value = step;
          typeSel.value = type;
          void load();
        }
      };
      stepSel.addEventListener('change', () => {
        filter.step = stepSel.value;
        void load();
      });
      typeSel.addEventListener('change', () => {
        filter.type = typeSel.value;
        void load();
      });
      const build = async (f: { step: string; type: string }): Promise<Node[]> => {
        const id = ctx.profile.id;
        const params = f.step === '' ? {} : { step: f.step };
        const [allSummary, allOps, allMatrix, slow] = await Promise.all([
          ctx.api.analysis(id, 'comm_summary', params),
          ctx.api.analysis(id, 'collectives', params),
          ctx.api.analysis(id, 'comm_matrix', { summary: 'total', ...params }),
          ctx.api.analysis(id, 'slow_links').catch(() => null)
        ]);
        if (types === null) {
          // the collective types of the whole profile (first load has no filter)
          types = Array.from(new Set(allSummary.rows.map(r => String(r.type ?? '')))).filter(Boolean);
          for (const ty of types) {
            option(typeSel, ty, displayName(ty));
          }
          typeSel.value = filter.type;
        }
        const summary = ofType(allSummary, f.type);
        const ops = ofType(allOps, f.type);
        const matrix = ofType(allMatrix, f.type, 'op_type');
        if (!summary.rows.length && !ops.rows.length) {
          return f.step || f.type
            ? [empty(t('ui.communication.none_filtered'))]
            : [empty(t('ui.communication.none')), h('p', { class: 'pi-note' }, t('ui.communication.none_why'))];
        }
        const out: Node[] = [];
        out.push(section(t('ui.communication.by_type'), ...splitChart(ctx, summary, charts)));
        const bw = linkChart(ctx, summary, charts);
        out.push(section(t('ui.communication.bandwidth'), bw));
        out.push(
          section(
            t('ui.communication.matrix'),
            matrixBlock(ctx, matrix, charts, metric, m => {
              metric = m;
              report();
            })
          )
        );
        if (slow) {
          out.push(
            section(
              t('ui.communication.slow_links'),
              slow.rows.length
                ? payloadTable(t, slow, ['label', 'evidence']).el
                : empty(t('ui.communication.no_slow_links'))
            )
          );
        }
        const tbl = payloadTable(t, ops, ['label', 'start_ns', 'group'], {
          onSelect: r => {
            if (isNum(r.start_ns) && isNum(r.elapse_us)) {
              ctx.navigate('timeline', { rank: r.rank, start_ns: r.start_ns, end_ns: r.start_ns + Math.round(r.elapse_us * 1e3) });
            }
          }
        });
        out.push(section(t('ui.communication.collectives'), h('p', { class: 'pi-note' }, t('ui.communication.collectives_note')), tbl.el));
        return out;
      };
      void load();
    },
    dispose() {
      charts.splice(0).forEach(c => c.dispose());
    }
  };
}

/**
 * The parts of each row's elapsed time, stacked: transit, wait outside synchronisation,
 * synchronisation (which the vendor counts inside wait) and idle.  transit + wait + idle =
 * elapsed (comm_summary's own columns); drawing sync on top of wait, as before, added it twice.
 */
export function elapsedParts(rows: Record<string, any>[]): { name: string; values: (number | null)[] }[] {
  const has = (c: string) => rows.some(r => isNum(r[c]) && r[c] > 0);
  if (!has('transit_us') && !has('wait_us') && !has('idle_us')) {
    return [];
  }
  const sync = (r: Record<string, any>) => (isNum(r.sync_us) && isNum(r.wait_us) ? Math.min(r.sync_us, r.wait_us) : 0);
  const parts = [
    { name: 'transit_us', values: rows.map(r => num(r.transit_us)) },
    { name: 'wait_other_us', values: rows.map(r => (isNum(r.wait_us) ? r.wait_us - sync(r) : null)) },
    { name: 'sync_us', values: rows.map(r => (isNum(r.wait_us) ? sync(r) : null)) },
    { name: 'idle_us', values: rows.map(r => num(r.idle_us)) }
  ];
  return parts.filter(p => p.values.some(v => isNum(v) && v > 0));
}

function splitChart(ctx: ViewContext, p: AnalysisPayload, charts: Chart[]): Node[] {
  const t = ctx.t;
  const split = elapsedParts(p.rows);
  // without the vendor's transit / wait split (GPU traces) the elapsed time is what there is
  const parts = split.length ? split : [{ name: 'elapse_us', values: p.rows.map(r => num(r.elapse_us)) }].filter(x => x.values.some(isNum));
  const out: Node[] = [];
  if (parts.length) {
    const c = new Chart(Math.max(120, 50 + p.rows.length * 26), 'pi-comm-split');
    charts.push(c);
    const labels = p.rows.map(r => String(r.label));
    const series = parts.map(k => ({ name: t(`ui.col.${k.name}`), values: k.values }));
    c.set(barOption(labels, series, fmtUs, true));
    // the drawn numbers, for readers of the page (tests): labels, series, and elapsed per row
    c.el.dataset.series = JSON.stringify({ labels, elapsed: p.rows.map(r => num(r.elapse_us)), parts: parts.map(k => ({ key: k.name, values: k.values })) });
    if (split.length) {
      out.push(h('p', { class: 'pi-note' }, t('ui.communication.parts_note')));
    }
    out.push(c.el);
  }
  out.push(payloadTable(t, p, ['label', 'bandwidth_gbps']).el);
  return out;
}

function linkChart(ctx: ViewContext, p: AnalysisPayload, charts: Chart[]): Node {
  const t = ctx.t;
  // per transport type only: the all-bytes figure (bandwidth_gbps) adds the on-chip LOCAL copies
  // (the matrix diagonal, ~30x faster than a link) to the links' bytes, and no link reaches it
  const links = LINKS.filter(k => p.rows.some(r => isNum(r[k])));
  const cols = links;
  if (!p.rows.some(r => cols.some(k => isNum(r[k])))) {
    return empty(t('ui.communication.no_bandwidth'));
  }
  const c = new Chart(Math.max(120, 60 + p.rows.length * 22 * cols.length), 'pi-comm-bandwidth');
  charts.push(c);
  const option = barOption(
    p.rows.map(r => String(r.label)),
    cols.map(k => ({ name: t(`ui.col.${k}`), values: p.rows.map(r => (isNum(r[k]) ? r[k] : null)) })),
    v => fmtCell('x_gbps', v)
  );
  // the bandwidth expected of one link of the type (comm_summary's `<type>_expected_ratio` is
  // the row's share of it): a dashed line on that type's bars
  const expected: Record<string, number> = {};
  cols.forEach((k, i) => {
    const share = k.replace(/_gbps$/, '_expected_ratio');
    const row = p.rows.find(r => isNum(r[k]) && isNum(r[share]) && r[share] > 0);
    if (!row) {
      return;
    }
    const gbps = Math.round(((row[k] as number) / (row[share] as number)) * 1000) / 1000;
    expected[k] = gbps;
    option.series[i].markLine = {
      silent: true,
      symbol: 'none',
      lineStyle: { type: 'dashed' },
      label: { position: 'start', formatter: t('ui.communication.expected', { link: t(`ui.col.${k}`), gbps: fmtCell('x_gbps', gbps) }) },
      data: [{ xAxis: gbps }]
    };
  });
  const top = Math.max(0, ...Object.values(expected));
  if (top > 0) {
    // the line stays on the chart, the axis ends at a round figure past it
    option.xAxis.max = (v: { max: number }) => Math.max(v.max, Math.ceil((top * 1.1) / 5) * 5);
  }
  c.set(option);
  c.el.dataset.series = JSON.stringify(cols);
  c.el.dataset.expected = JSON.stringify(expected);
  return h('div', {}, h('p', { class: 'pi-note' }, t('ui.communication.bandwidth_note')), c.el);
}

/** The matrix with its measure picker; `metric` is the measure shown first, `onMetric` hears a change. */
function matrixBlock(ctx: ViewContext, p: AnalysisPayload, charts: Chart[], metric0 = METRICS[0], onMetric: (m: string) => void = () => {}): HTMLElement {
  const t = ctx.t;
  const cells = matrixCells(p.rows);
  if (!cells.length) {
    return empty(t('ui.communication.no_matrix'));
  }
  const ranks = Array.from(new Set(cells.flatMap(c => [c.src, c.dst]))).sort((a, b) => a - b);
  // rows: the ranks that recorded sends (the loaded ones); columns: every peer they reached
  const srcs = Array.from(new Set(cells.map(c => c.src))).sort((a, b) => a - b);
  const box = h('div', { class: 'pi-matrix' });
  const picker = h('select', { class: 'pi-matrix-metric', 'aria-label': t('ui.communication.metric') });
  for (const m of METRICS) {
    picker.appendChild(h('option', { value: m }, t(`ui.col.${m}`)));
  }
  picker.value = METRICS.includes(metric0) ? metric0 : METRICS[0];
  const chart = new Chart(Math.max(160, 90 + srcs.length * 40), 'pi-matrix-chart');
  charts.push(chart);
  const grid = h('div', { class: 'pi-matrix-table' });
  const fmt = (metric: string, v: number | null) =>
    v === null ? '' : metric === 'bytes' ? fmtBytes(v) : metric === 'transit_us' ? fmtUs(v) : fmtCell('x_gbps', v);
  const draw = () => {
    const metric = picker.value;
    const item = (c: Cell) => [ranks.indexOf(c.dst), srcs.indexOf(c.src), value(c, metric), Array.from(c.transports).join('/')];
    // a rank's copy to itself (LOCAL) is far faster than any link: kept out of the colour scale
    const links = cells.filter(c => c.src !== c.dst).map(item);
    const self = cells.filter(c => c.src === c.dst).map(item);
    const vals = links.map(d => d[2]).filter(isNum) as number[];
    chart.el.dataset.range = JSON.stringify([0, vals.length ? Math.max(...vals) : 1]);
    const label = { show: ranks.length <= 12, formatter: (q: any) => fmt(metric, q.value[2]).replace(' GB/s', ''), color: '#1b1b1f' };
    chart.set({
      animation: false,
      grid: { left: 8, right: 150, top: 40, bottom: 8, containLabel: true },
      tooltip: {
        formatter: (q: any) =>
          `${esc(t('ui.communication.link', { src: srcs[q.value[1]], dst: ranks[q.value[0]] }))}<br/>${esc(q.value[3])} ${esc(fmt(metric, q.value[2]))}`
      },
      xAxis: { type: 'category', data: ranks.map(String), name: t('ui.communication.dst'), nameLocation: 'middle', nameGap: 24, position: 'top' },
      yAxis: { type: 'category', data: srcs.map(String), name: t('ui.communication.src'), inverse: true },
      visualMap: {
        seriesIndex: 0,
        dimension: 2,
        // anchored at 0: a 3 % spread between links must look like one, not like black vs white
        min: 0,
        max: vals.length ? Math.max(...vals) : 1,
        calculable: true,
        orient: 'vertical',
        right: 0,
        top: 'middle',
        itemHeight: 100,
        formatter: (v: number) => fmt(metric, v),
        inRange: { color: ['#f7fbff', '#9ecae1', '#4292c6'] }
      },
      series: [
        { type: 'heatmap', data: links, label, itemStyle: { borderColor: 'rgba(128,128,128,0.4)', borderWidth: 1 } },
        { type: 'heatmap', data: self, label, itemStyle: { color: '#d9d9d9', borderColor: 'rgba(128,128,128,0.4)', borderWidth: 1 } }
      ]
    });
    // the same numbers as a table (the one table widget: sort, filter, copy, CSV of the raw values)
    clear(grid);
    const rows = srcs.map(src => {
      const r: Record<string, any> = { src_rank: src };
      for (const dst of ranks) {
        const c = cells.find(x => x.src === src && x.dst === dst);
        r[`to_${dst}`] = c ? value(c, metric) : null;
      }
      return r;
    });
    const table = new DataTable({
      t,
      rows,
      name: `comm_matrix_${metric}`,
      className: 'pi-matrix-grid',
      columns: [
        { key: 'src_rank', label: `${t('ui.communication.src')} \\ ${t('ui.communication.dst')}`, format: v => String(v) },
        ...ranks.map(dst => ({
          key: `to_${dst}`,
          label: String(dst),
          numeric: true,
          format: (v: any) => fmt(metric, isNum(v) ? v : null),
          attrs: (r: Record<string, any>) => ({ 'data-src': r.src_rank, 'data-dst': dst })
        }))
      ]
    });
    grid.appendChild(table.el);
  };
  picker.addEventListener('change', () => {
    draw();
    onMetric(picker.value);
  });
  append(box, [
    h('div', { class: 'pi-controls' }, h('label', { class: 'pi-control' }, h('span', {}, t('ui.communication.metric')), picker)),
    h('p', { class: 'pi-note' }, t('ui.communication.matrix_note')),
    chart.el,
    grid
  ]);
  draw();
  return box;
}
