/**
 * Memory: allocated / reserved / active curves per component on the device with the peaks
 * marked, the peak numbers, the spikes (memory_peaks) and the operators that allocate most
 * (memory_by_op), each spike with a jump to its moment on the timeline.
 */
import { append, fmtBytes, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { barOption, Chart, esc } from '../widgets/chart';
import { isNum, num, tr, txt } from '../widgets/format';
import { Card, cards, empty, errorBox, fill, section } from '../widgets/parts';
import { columnsFor, DataTable } from '../widgets/table';
import type { View, ViewContext } from './types';

const CURVES: [string, string][] = [
  ['allocated_mib', 'allocated_bytes'],
  ['reserved_mib', 'reserved_bytes'],
  ['active_mib', 'active_bytes']
];
/** half-width of the timeline window shown around a memory event (1 ms) */
const AROUND_NS = 1_000_000;

export function create(): View {
  const charts: Chart[] = [];
  const drop = () => charts.splice(0).forEach(c => c.dispose());
  return {
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      let rank = String(ctx.profile.ranks[0] ?? '');
      const body = h('div');
      if (ctx.profile.ranks.length > 1) {
        const s = h('select', { class: 'pi-mem-rank', 'aria-label': t('ui.common.rank') });
        for (const r of ctx.profile.ranks) {
          s.appendChild(h('option', { value: String(r) }, String(r)));
        }
        s.addEventListener('change', () => {
          rank = s.value;
          void load();
        });
        el.appendChild(h('div', { class: 'pi-controls' }, h('label', { class: 'pi-control' }, h('span', {}, t('ui.common.rank')), s)));
      }
      el.appendChild(body);
      const jump = (r: Record<string, any>) => {
        if (!isNum(r.ts_ns)) {
          return;
        }
        ctx.navigate('timeline', { rank: r.rank, start_ns: r.ts_ns - AROUND_NS, end_ns: r.ts_ns + AROUND_NS });
      };
      const load = () =>
        fill(
          body,
          t,
          async () => {
            drop();
            const params = rank === '' ? {} : { rank };
            const [curve, peaks, byOp] = await Promise.all([
              ctx.api.analysis(ctx.profile.id, 'memory_curve', { ...params, max_points: 2000 }),
              ctx.api.analysis(ctx.profile.id, 'memory_peaks', params),
              ctx.api.analysis(ctx.profile.id, 'memory_by_op', params)
            ]);
            if (!curve.rows.length && !peaks.rows.length && !byOp.rows.length) {
              return [empty(t('ui.memory.none')), h('p', { class: 'pi-note' }, t('ui.memory.host_note'))];
            }
            const out: Node[] = [];
            out.push(section(t('ui.memory.peaks'), peakCards(ctx, peaks)));
            if (curve.rows.length) {
              const c = new Chart(320);
              charts.push(c);
              c.set(curveOption(ctx, curve));
              c.on('click', (p: any) => {
                const ts = p.data && p.data[2];
                if (isNum(ts)) {
                  ctx.navigate('timeline', { rank: Number(rank || 0), start_ns: ts - AROUND_NS, end_ns: ts + AROUND_NS });
                }
              });
              out.push(section(t('ui.memory.curves'), h('p', { class: 'pi-note' }, t('ui.memory.curves_note')), c.el));
            }
            if (peaks.rows.length) {
              const tbl = new DataTable({
                t,
                columns: columnsFor(t, peaks.columns, peaks.rows, ['label', 'ts_ns', 'allocated_mib', 'reserved_mib', 'active_mib']),
                rows: peaks.rows,
                filter: true,
                onSelect: jump
              });
              out.push(section(t('ui.memory.spikes'), h('p', { class: 'pi-note' }, t('ui.memory.spikes_note')), tbl.el));
            }
            if (byOp.rows.length) {
              const top = byOp.rows.slice(0, 15);
              const c = new Chart(Math.max(120, 30 + top.length * 22));
              charts.push(c);
              c.set(barOption(top.map(r => String(r.label ?? r.name)), [{ name: t('ui.col.total_bytes'), values: top.map(r => num(r.total_bytes)) }], fmtBytes));
              const tbl = new DataTable({ t, columns: columnsFor(t, byOp.columns, byOp.rows, ['label']), rows: byOp.rows, filter: true });
              out.push(section(t('ui.memory.by_op'), c.el, tbl.el));
            }
            out.push(h('p', { class: 'pi-note' }, t('ui.memory.host_note')));
            return out;
          },
          errorBox
        );
      void load();
    },
    dispose: drop
  };
}

function peakCards(ctx: ViewContext, peaks: AnalysisPayload): HTMLElement {
  const t = ctx.t;
  const items: Card[] = [];
  for (const kind of ['peak_allocated', 'peak_reserved']) {
    const col = kind === 'peak_allocated' ? 'allocated_bytes' : 'reserved_bytes';
    for (const r of peaks.rows.filter(x => x.kind === kind && isNum(x[col]))) {
      items.push({
        key: `${kind}:${r.component}`,
        label: t(`ui.memory.${kind}`, { component: txt(r.component) }),
        value: fmtBytes(num(r[col]) ?? 0),
        sub: isNum(r.t_ms) ? t('ui.memory.at', { t: `${r.t_ms.toFixed(1)} ms` }) : undefined
      });
    }
  }
  if (!items.length) {
    return empty(t('ui.memory.no_peaks'));
  }
  const el = cards(items);
  append(el, []);
  return el;
}

function curveOption(ctx: ViewContext, p: AnalysisPayload): any {
  const t = ctx.t;
  const series = new Map<string, { mib: string; data: [number, number | null, number][] }>();
  for (const r of p.rows) {
    for (const [mib] of CURVES) {
      if (!isNum(r[mib])) {
        continue;
      }
      const name = `${r.component} ${tr(t, `ui.memory.${mib}`, mib)}`;
      if (!series.has(name)) {
        series.set(name, { mib, data: [] });
      }
      series.get(name)!.data.push([Number(r.t_ms), num(r[mib]), Number(r.ts_ns)]);
    }
  }
  return {
    animation: false,
    grid: { left: 8, right: 24, top: 40, bottom: 40, containLabel: true },
    legend: { type: 'scroll', top: 0 },
    dataZoom: [{ type: 'inside' }, { type: 'slider', height: 18, bottom: 6 }],
    tooltip: {
      trigger: 'axis',
      formatter: (ps: any[]) =>
        [esc(`${(ps[0]?.value?.[0] ?? 0).toFixed(3)} ms`)]
          .concat(ps.map(q => `${q.marker}${esc(q.seriesName)}: ${esc(fmtBytes((q.value?.[1] ?? 0) * 2 ** 20))}`))
          .join('<br/>')
    },
    xAxis: { type: 'value', name: 'ms', axisLabel: { formatter: (v: number) => `${v}` } },
    yAxis: { type: 'value', name: 'MiB' },
    series: Array.from(series.entries()).map(([name, s]) => ({
      type: 'line',
      name,
      showSymbol: false,
      step: 'end',
      data: s.data,
      markPoint:
        s.mib === 'active_mib'
          ? undefined
          : {
              symbolSize: 44,
              data: [{ type: 'max', name: t('ui.memory.peak') }],
              label: { formatter: (q: any) => `${Math.round(q.value)}`, fontSize: 9, color: '#fff' }
            }
    }))
  };
}
