/**
 * Memory: allocated / reserved / active curves per component on the device, the peak numbers,
 * the spikes (memory_peaks), the operators that allocate most (memory_by_op) and every
 * allocation (memory_allocations).
 *
 * A profile holds up to nine curves (PTA, GE, PTA+GE, APP, WORKSPACE x allocated / reserved /
 * active): toggles choose components and measures (allocated and reserved shown at first).
 * Dragging across the chart brushes a time range: the spikes and allocations below keep what is
 * live in it (the allocations are asked of the server for that range, so no block is missed).
 * The peak of each curve is a small dot, its value in the tooltip and the cards, never a pin
 * that covers the next one.  Sizes are in MiB or GiB, whichever reads.
 */
import { append, clear, fmtBytes, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { barOption, Chart, esc, trimZeros } from '../widgets/chart';
import { isNum, num, tr, txt } from '../widgets/format';
import { Card, cards, empty, errorBox, fill, section } from '../widgets/parts';
import { payloadTable } from '../widgets/table';
import type { View, ViewContext, ViewState } from './types';

export const MEASURES = ['allocated_mib', 'reserved_mib', 'active_mib'];
/** measures shown before the user chooses (active mostly repeats allocated) */
const DEFAULT_MEASURES = ['allocated_mib', 'reserved_mib'];
/** half-width of the timeline window shown around a memory event (1 ms) */
const AROUND_NS = 1_000_000;

/** A memory size given in MiB, in the unit that reads (12.5 MiB, 3.21 GiB). */
export function fmtMib(mib: number): string {
  return fmtBytes(mib * 2 ** 20);
}

interface Range {
  start_ms: number;
  end_ms: number;
}

/** What the view shows, kept in the page address: the curves chosen (null: the default ones)
 * and the brushed range. */
interface Shown {
  components: string[] | null;
  measures: string[] | null;
  range: Range | null;
}

/** A brushed range as the address keeps it: ms to the microsecond. */
function roundRange(r: Range): Range {
  const us = (v: number) => Math.round(v * 1000) / 1000;
  return { start_ms: us(r.start_ms), end_ms: us(r.end_ms) };
}

export function create(): View {
  const charts: Chart[] = [];
  const drop = () => charts.splice(0).forEach(c => c.dispose());
  let apply: ((s?: ViewState) => void) | null = null;
  return {
    show(s?: ViewState) {
      apply?.(s);
    },
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      let rank = String(ctx.profile.ranks[0] ?? '');
      let shown: Shown = { components: null, measures: null, range: null };
      let loaded = false;
      const report = () =>
        ctx.setState?.({
          rank: ctx.profile.ranks.length > 1 && rank !== '' ? Number(rank) : undefined,
          components: shown.components ?? undefined,
          measures: shown.measures ?? undefined,
          brush: shown.range ?? undefined
        });
      let rankSel: HTMLSelectElement | null = null;
      const body = h('div');
      if (ctx.profile.ranks.length > 1) {
        const s = h('select', { class: 'pi-mem-rank', 'aria-label': t('ui.common.rank') });
        rankSel = s;
        for (const r of ctx.profile.ranks) {
          s.appendChild(h('option', { value: String(r) }, String(r)));
        }
        s.addEventListener('change', () => {
          rank = s.value;
          shown = { components: null, measures: null, range: null }; // another rank has its own curves
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
      const load = () => {
        loaded = true;
        report();
        return fill(
          body,
          t,
          async () => {
            drop();
            const params = rank === '' ? {} : { rank };
            const [curve, peaks, byOp, allocs] = await Promise.all([
              ctx.api.analysis(ctx.profile.id, 'memory_curve', { ...params, max_points: 2000 }),
              ctx.api.analysis(ctx.profile.id, 'memory_peaks', params),
              ctx.api.analysis(ctx.profile.id, 'memory_by_op', params),
              ctx.api.analysis(ctx.profile.id, 'memory_allocations', params).catch(() => null)
            ]);
            if (!curve.rows.length && !peaks.rows.length && !byOp.rows.length) {
              return [empty(t('ui.memory.none')), h('p', { class: 'pi-note' }, t('ui.memory.host_note'))];
            }
            const out: Node[] = [];
            out.push(section(t('ui.memory.peaks'), peakCards(ctx, peaks)));
            // what the brush filters: the spikes (client side) and the allocations (server side)
            const spikesBox = h('div', { class: 'pi-mem-spikes' });
            const allocBox = h('div', { class: 'pi-mem-allocs' });
            const rangeNote = h('div', { class: 'pi-mem-range', 'data-range': '' });
            const drawSpikes = (range: Range | null) => {
              clear(spikesBox);
              const rows = range ? peaks.rows.filter(r => isNum(r.t_ms) && r.t_ms >= range.start_ms && r.t_ms <= range.end_ms) : peaks.rows;
              spikesBox.appendChild(
                payloadTable(t, { ...peaks, rows, exact: undefined }, ['label', 'ts_ns', 'allocated_mib', 'reserved_mib', 'active_mib'], { onSelect: jump }).el
              );
            };
            let asked = 0;
            const drawAllocs = (range: Range | null) => {
              const mine = ++asked;
              if (!range) {
                clear(allocBox);
                allocBox.appendChild(allocs && allocs.rows.length ? allocTable(ctx, allocs) : empty(t('ui.memory.no_allocations')));
                return;
              }
              void fill(
                allocBox,
                t,
                async () => {
                  const p = await ctx.api.analysis(ctx.profile.id, 'memory_allocations', { ...params, ...range });
                  return mine === asked && p.rows.length ? allocTable(ctx, p) : empty(t('ui.memory.no_allocations'));
                },
                errorBox
              );
            };
            const setRange = (given: Range | null) => {
              const range = given && roundRange(given);
              if (JSON.stringify(range) !== JSON.stringify(shown.range)) {
                shown.range = range;
                report();
              }
              clear(rangeNote);
              rangeNote.dataset.range = range ? `${range.start_ms},${range.end_ms}` : '';
              if (range) {
                const reset = h('button', { class: 'pi-chip pi-mem-range-reset' }, t('ui.memory.range_reset'));
                reset.addEventListener('click', () => {
                  chart?.clearBrush();
                  setRange(null);
                });
                append(rangeNote, [t('ui.memory.range', { start: range.start_ms.toFixed(3), end: range.end_ms.toFixed(3) }), ' ', reset]);
              }
              drawSpikes(range);
              drawAllocs(range);
            };
            let chart: CurveChart | null = null;
            if (curve.rows.length) {
              chart = new CurveChart(
                ctx,
                curve,
                setRange,
                ts => ctx.navigate('timeline', { rank: Number(rank || 0), start_ns: ts - AROUND_NS, end_ns: ts + AROUND_NS }),
                { components: shown.components, measures: shown.measures, range: shown.range },
                (components, measures) => {
                  shown.components = components;
                  shown.measures = measures;
                  report();
                }
              );
              charts.push(chart.chart);
              out.push(section(t('ui.memory.curves'), h('p', { class: 'pi-note' }, t('ui.memory.curves_note')), chart.el, rangeNote));
            }
            setRange(chart ? shown.range : null);
            if (peaks.rows.length) {
              out.push(section(t('ui.memory.spikes'), h('p', { class: 'pi-note' }, t('ui.memory.spikes_note')), spikesBox));
            }
            out.push(section(t('ui.memory.allocations'), h('p', { class: 'pi-note' }, t('ui.memory.allocations_note')), allocBox));
            if (byOp.rows.length) {
              const top = byOp.rows.slice(0, 15);
              const c = new Chart(Math.max(120, 30 + top.length * 22));
              charts.push(c);
              c.set(barOption(top.map(r => String(r.label ?? r.name)), [{ name: t('ui.col.total_bytes'), values: top.map(r => num(r.total_bytes)) }], fmtBytes));
              out.push(section(t('ui.memory.by_op'), c.el, payloadTable(t, byOp).el));
            }
            out.push(h('p', { class: 'pi-note' }, t('ui.memory.host_note')));
            return out;
          },
          errorBox
        );
      };
      /** A link's (or Back/Forward's) state; no state keeps what is shown (a tab click). */
      apply = (s?: ViewState) => {
        if (!s) {
          if (!loaded) {
            void load();
          }
          return;
        }
        const r = typeof s.rank === 'number' && ctx.profile.ranks.includes(s.rank) ? String(s.rank) : String(ctx.profile.ranks[0] ?? '');
        const next: Shown = { components: s.components ?? null, measures: s.measures ?? null, range: s.brush ?? null };
        if (loaded && r === rank && JSON.stringify(next) === JSON.stringify(shown)) {
          return;
        }
        rank = r;
        shown = next;
        if (rankSel) {
          rankSel.value = rank;
        }
        void load();
      };
    },
    dispose: drop
  };
}

function allocTable(ctx: ViewContext, p: AnalysisPayload): HTMLElement {
  const box = payloadTable(ctx.t, p, ['alloc_ns', 'release_ns'], { className: 'pi-mem-alloc-table' }).el;
  if (p.total_rows > p.rows.length) {
    box.appendChild(h('div', { class: 'pi-note' }, ctx.t('ui.result.capped', { n: p.rows.length, total: p.total_rows })));
  }
  return box;
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
  return cards(items);
}

/** One curve of the chart: a component's measure. */
interface Curve {
  component: string;
  measure: string;
  data: [number, number | null, number][];
}

export function curvesOf(rows: Record<string, any>[]): Curve[] {
  const out = new Map<string, Curve>();
  for (const r of rows) {
    for (const m of MEASURES) {
      if (!isNum(r[m])) {
        continue;
      }
      const key = `${r.component}|${m}`;
      if (!out.has(key)) {
        out.set(key, { component: String(r.component), measure: m, data: [] });
      }
      out.get(key)!.data.push([Number(r.t_ms), num(r[m]), Number(r.ts_ns)]);
    }
  }
  return Array.from(out.values());
}

/** A step of 1, 2 or 5 x 10^k giving about five ticks up to `max`. */
export function niceStep(max: number): number {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/** The curves chart with its toggles and its brush. */
class CurveChart {
  readonly el: HTMLElement;
  readonly chart: Chart;
  private readonly curves: Curve[];
  private readonly components: string[];
  private readonly measures: string[];
  private shownComponents: Set<string>;
  private shownMeasures: Set<string>;
  /** the brushed range (drawn again whenever the chart is) */
  private range: Range | null = null;

  constructor(
    private readonly ctx: ViewContext,
    p: AnalysisPayload,
    private readonly onRange: (r: Range | null) => void,
    onPick: (ts: number) => void,
    initial: Shown,
    onToggle: (components: string[] | null, measures: string[] | null) => void
  ) {
    const t = ctx.t;
    this.curves = curvesOf(p.rows);
    this.components = Array.from(new Set(this.curves.map(c => c.component)));
    this.measures = MEASURES.filter(m => this.curves.some(c => c.measure === m));
    // a link's choice, kept to what this profile records; the defaults when it names none of it
    const pick = (given: string[] | null, known: string[], dflt: string[]) => {
      const mine = (given || []).filter(x => known.includes(x));
      return new Set(mine.length ? mine : dflt);
    };
    this.shownComponents = pick(initial.components, this.components, this.components);
    const first = this.measures.filter(m => DEFAULT_MEASURES.includes(m));
    const dfltMeasures = first.length ? first : this.measures;
    this.shownMeasures = pick(initial.measures, this.measures, dfltMeasures);
    // what goes in the address: null where the choice is the default
    const chosen = (set: Set<string>, all: string[], dflt: string[]) => {
      const list = all.filter(x => set.has(x));
      return list.length === dflt.length && dflt.every(x => set.has(x)) ? null : list;
    };
    const toggled = () => onToggle(chosen(this.shownComponents, this.components, this.components), chosen(this.shownMeasures, this.measures, dfltMeasures));
    this.chart = new Chart(340, 'pi-mem-chart');
    const toggles = h('div', { class: 'pi-mem-toggles' });
    const group = (label: string, items: string[], shown: Set<string>, text: (x: string) => string, cls: string) => {
      const box = h('div', { class: `pi-chips ${cls}` }, h('span', { class: 'pi-chips-label' }, label));
      for (const x of items) {
        const b = h('button', { class: 'pi-chip pi-mem-toggle', 'data-item': x, 'aria-pressed': shown.has(x) ? 'true' : 'false' }, text(x));
        b.classList.toggle('pi-active', shown.has(x));
        b.addEventListener('click', () => {
          if (shown.has(x)) {
            shown.delete(x);
          } else {
            shown.add(x);
          }
          b.classList.toggle('pi-active', shown.has(x));
          b.setAttribute('aria-pressed', shown.has(x) ? 'true' : 'false');
          this.draw();
          toggled();
        });
        box.appendChild(b);
      }
      return box;
    };
    append(toggles, [
      group(t('ui.memory.components'), this.components, this.shownComponents, x => x, 'pi-mem-components'),
      group(t('ui.memory.measures'), this.measures, this.shownMeasures, m => tr(t, `ui.memory.${m}`, m), 'pi-mem-measures')
    ]);
    this.el = h('div', { class: 'pi-mem-curves' }, toggles, this.chart.el);
    this.chart.on('brushEnd', (e: any) => {
      const area = e.areas && e.areas[0];
      const r = area && area.coordRange;
      this.range = r && isNum(r[0]) && isNum(r[1]) && r[1] > r[0] ? { start_ms: r[0], end_ms: r[1] } : null;
      this.onRange(this.range);
    });
    this.chart.on('click', (q: any) => {
      const ts = q.data && q.data[2];
      if (isNum(ts)) {
        onPick(ts);
      }
    });
    this.range = initial.range;
    this.chart.onDraw(ec => {
      ec.dispatchAction({ type: 'takeGlobalCursor', key: 'brush', brushOption: { brushType: 'lineX', brushMode: 'single' } });
      if (this.range) {
        // a link's range, or the user's after a toggle redrew the chart: drawn as if dragged
        ec.dispatchAction({ type: 'brush', areas: [{ brushType: 'lineX', xAxisIndex: 0, coordRange: [this.range.start_ms, this.range.end_ms] }] });
      }
    });
    this.draw();
    toggled();
  }

  clearBrush(): void {
    this.range = null;
    this.chart.instance?.dispatchAction({ type: 'brush', areas: [] });
  }

  /** The curves shown now (for the page and its tests). */
  shown(): Curve[] {
    return this.curves.filter(c => this.shownComponents.has(c.component) && this.shownMeasures.has(c.measure));
  }

  private draw(): void {
    const t = this.ctx.t;
    const shown = this.shown();
    this.chart.el.dataset.series = JSON.stringify(shown.map(c => `${c.component}|${c.measure}`));
    const name = (c: Curve) => `${c.component} ${tr(t, `ui.memory.${c.measure}`, c.measure)}`;
    const top = Math.max(1, ...shown.flatMap(c => c.data.map(d => (isNum(d[1]) ? d[1] : 0))));
    const gib = top >= 2048;
    const scale = gib ? 1024 : 1;
    this.chart.set({
      animation: false,
      grid: { left: 8, right: 24, top: 30, bottom: 40, containLabel: true },
      legend: { type: 'scroll', top: 0, selectedMode: false },
      brush: { xAxisIndex: 0, brushType: 'lineX', brushMode: 'single', transformable: true, throttleType: 'debounce', throttleDelay: 200 },
      dataZoom: [{ type: 'slider', height: 18, bottom: 6 }],
      tooltip: {
        trigger: 'axis',
        formatter: (ps: any[]) =>
          [esc(`${(ps[0]?.value?.[0] ?? 0).toFixed(3)} ms`)].concat(ps.map(q => `${q.marker}${esc(q.seriesName)}: ${esc(fmtMib(q.value?.[1] ?? 0))}`)).join('<br/>')
      },
      xAxis: { type: 'value', name: 'ms', axisLabel: { formatter: (v: number) => `${v}` } },
      // ticks at round numbers of the unit that reads (0.5 GiB steps, not 1.46 GiB from MiB ticks)
      yAxis: {
        type: 'value',
        name: gib ? 'GiB' : 'MiB',
        axisLabel: { formatter: (v: number) => trimZeros((v / scale).toFixed(gib ? 2 : 0)) },
        interval: niceStep(top / scale) * scale
      },
      series: shown.map(c => ({
        type: 'line',
        name: name(c),
        showSymbol: false,
        step: 'end',
        data: c.data,
        // the peak as a small dot (its value in the tooltip): nine labelled pins covered each other
        markPoint:
          c.measure === 'active_mib'
            ? undefined
            : { symbol: 'circle', symbolSize: 7, label: { show: false }, data: [{ type: 'max', name: t('ui.memory.peak') }], tooltip: { formatter: (q: any) => `${esc(name(c))} ${esc(t('ui.memory.peak'))}: ${esc(fmtMib(q.value))}` } }
      }))
    });
  }
}
