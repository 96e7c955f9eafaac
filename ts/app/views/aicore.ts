/**
 * AI Core: how busy the compute units were and what bounded each kernel.  Per step, compute /
 * communication-only / idle as parts of the step's device span and the cube / vector busy
 * ratios (the `utilization` analysis); the time by kernel category; the PMU ratios per step; per
 * kernel the PMU ratios and the bound type they imply (`kernel_pmu`: a unit ratio above 80 %,
 * else "none", the vendor's advisor rule, shown in the view).  Every number is the analysis's
 * own value, formatted; nothing is recomputed here but means over rank-steps and differences of
 * the analysis's own columns.
 */
import { clear, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { barOption, Chart } from '../widgets/chart';
import { colLabel, fmtCell, fmtPct, fmtUs, isNum, tr, txt } from '../widgets/format';
import { Card, cards, empty, errorBox, loading, section } from '../widgets/parts';
import { Column, DataTable } from '../widgets/table';
import type { View, ViewContext } from './types';

/** kernel categories of `utilization` (compute ones first; communication/memory are not AI Core) */
const CATEGORIES = ['matmul_us', 'convolution_us', 'vector_us', 'format_conversion_us', 'ai_cpu_us', 'other_us'];
const BOUND_RATIO = 0.8;

type Row = Record<string, any>;

function mean(rows: Row[], col: string): number | null {
  const v = rows.map(r => r[col]).filter(isNum);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

export function create(): View {
  const charts: Chart[] = [];
  return {
    async mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      el.appendChild(loading(t));
      const get = (name: string) => ctx.api.analysis(ctx.profile.id, name, {});
      let util: AnalysisPayload;
      let kern: AnalysisPayload | null = null;
      try {
        [util, kern] = await Promise.all([get('utilization'), get('kernel_pmu').catch(() => null)]);
      } catch (e) {
        clear(el);
        el.appendChild(errorBox(e, t));
        return;
      }
      clear(el);
      el.classList.add('pi-aicore');
      const steps = util.rows.filter(r => isNum(r.span_us) && r.span_us > 0 && isNum(r.busy_us) && isNum(r.computing_us)) as Row[];
      if (!steps.length) {
        el.appendChild(empty(t('ui.aicore.none')));
        return;
      }
      el.appendChild(section(t('ui.aicore.headline'), headline(ctx, steps)));
      const chart = (height: number, opt: unknown, note: string, title: string) => {
        const c = new Chart(height);
        c.set(opt);
        charts.push(c);
        el.appendChild(section(title, h('p', { class: 'pi-note' }, note), c.el));
      };
      const labels = steps.map(r => tr(t, 'ui.overview.rank_step', String(r.label), { rank: txt(r.rank), step: txt(r.step ?? '-') }));
      const parts = [
        { name: t('ui.aicore.compute'), values: steps.map(r => r.computing_us as number) },
        { name: t('ui.aicore.comm_only'), values: steps.map(r => r.busy_us - r.computing_us) },
        { name: t('ui.aicore.idle'), values: steps.map(r => r.span_us - r.busy_us) }
      ];
      chart(Math.max(140, 60 + steps.length * 28), barOption(labels, parts, fmtUs, true), t('ui.aicore.steps_note'), t('ui.aicore.steps'));
      const cats = CATEGORIES.filter(c => steps.some(r => isNum(r[c]) && r[c] > 0));
      if (cats.length) {
        const series = cats.map(c => ({ name: tr(t, `ui.col.${c}`, c.replace(/_us$/, '').replace(/_/g, ' ')), values: steps.map(r => (isNum(r[c]) ? r[c] : null)) }));
        chart(Math.max(140, 60 + steps.length * 28), barOption(labels, series, fmtUs, true), t('ui.aicore.categories_note'), t('ui.aicore.categories'));
      }
      const pmu = util.columns.filter(c => c.startsWith('pmu_') && steps.some(r => isNum(r[c])));
      if (pmu.length) {
        const cols: Column[] = [
          { key: 'label', label: t('ui.aicore.step') },
          { key: 'cube_busy_ratio', label: colLabel(t, 'cube_busy_ratio'), numeric: true, format: v => fmtPct(v) },
          { key: 'vector_busy_ratio', label: colLabel(t, 'vector_busy_ratio'), numeric: true, format: v => fmtPct(v) },
          ...pmu.map(c => ({ key: c, label: pmuLabel(t, c), title: c, numeric: true, format: (v: unknown) => fmtPct(v as number) }))
        ];
        el.appendChild(section(t('ui.aicore.pmu_steps'), new DataTable({ t, columns: cols, rows: steps, name: 'utilization', className: 'pi-aicore-steps' }).el));
      }
      el.appendChild(section(t('ui.aicore.kernels'), kernels(ctx, kern)));
    },
    dispose() {
      charts.forEach(c => c.dispose());
    }
  };
}

/** The headline: compute first (the share of the step the AI Cores computed), then the units. */
function headline(ctx: ViewContext, steps: Row[]): HTMLElement {
  const t = ctx.t;
  const items: Card[] = [
    { key: 'compute', label: t('ui.aicore.compute_ratio'), value: fmtPct(mean(steps, 'compute_ratio')), sub: fmtUs(mean(steps, 'computing_us')) }
  ];
  if (steps.some(r => isNum(r.cube_busy_ratio))) {
    items.push({ key: 'cube', label: t('ui.aicore.cube_ratio'), value: fmtPct(mean(steps, 'cube_busy_ratio')), sub: fmtUs(mean(steps, 'cube_busy_us')) });
    items.push({ key: 'vector', label: t('ui.aicore.vector_ratio'), value: fmtPct(mean(steps, 'vector_busy_ratio')), sub: fmtUs(mean(steps, 'vector_busy_us')) });
  }
  const busy = mean(steps, 'busy_ratio');
  items.push({ key: 'busy', label: t('ui.aicore.busy_ratio'), value: fmtPct(busy), sub: t('ui.aicore.busy_sub') });
  items.push({ key: 'idle', label: t('ui.aicore.idle_ratio'), value: busy === null ? '' : fmtPct(1 - busy), sub: fmtUs(mean(steps.map(r => ({ v: r.span_us - r.busy_us })), 'v')) });
  return cards(items);
}

function pmuLabel(t: ViewContext['t'], col: string): string {
  return tr(t, `ui.col.${col}`, col.replace(/^pmu_/, '').replace(/_ratio$/, '').replace(/_/g, ' '));
}

/** The bound type, its ratio and every PMU ratio `rows` record, as table columns (the AI Core
 * view's kernel table and the Operators table show them alike). */
export function pmuColumns(t: ViewContext['t'], columns: string[], rows: Record<string, unknown>[]): Column[] {
  const ratios = columns.filter(c => c.startsWith('pmu_') && rows.some(r => isNum(r[c])));
  return [
    {
      key: 'bound',
      label: t('ui.aicore.bound'),
      format: v => (v === 'none' ? t('ui.aicore.bound_none') : v ? tr(t, `ui.aicore.unit.${v}`, String(v)) : '')
    },
    { key: 'bound_ratio', label: t('ui.aicore.bound_ratio'), numeric: true, format: v => fmtPct(v) },
    ...ratios.map(c => ({
      key: c,
      label: pmuLabel(t, c),
      title: c,
      numeric: true,
      format: (v: unknown) => (c.endsWith('_ratio') ? fmtPct(v as number) : fmtCell(c, v))
    }))
  ];
}

/** Per kernel: time, the PMU ratios, and the bound type with the rule that gave it. */
function kernels(ctx: ViewContext, kern: AnalysisPayload | null): HTMLElement {
  const t = ctx.t;
  if (!kern || !kern.rows.length) {
    return empty(t('ui.aicore.no_pmu'));
  }
  const cols: Column[] = [
    { key: 'name', label: colLabel(t, 'name') },
    { key: 'core', label: colLabel(t, 'core') },
    { key: 'count', label: colLabel(t, 'count'), numeric: true },
    { key: 'total_us', label: colLabel(t, 'total_us'), numeric: true, format: v => fmtUs(v) },
    ...pmuColumns(t, kern.columns, kern.rows)
  ];
  const counts = new Map<string, number>();
  for (const r of kern.rows) {
    const b = String(r.bound ?? '');
    counts.set(b, (counts.get(b) || 0) + (isNum(r.total_us) ? r.total_us : 0));
  }
  const summary = Array.from(counts.entries())
    .filter(([b]) => b)
    .sort((a, b) => b[1] - a[1])
    .map(([b, us]) => `${b === 'none' ? t('ui.aicore.bound_none') : tr(t, `ui.aicore.unit.${b}`, b)} ${fmtUs(us)}`)
    .join(' · ');
  return h(
    'div',
    {},
    h('p', { class: 'pi-note pi-aicore-rule' }, t('ui.aicore.rule', { pct: Math.round(BOUND_RATIO * 100) })),
    h('p', { class: 'pi-aicore-bounds' }, summary),
    new DataTable({ t, columns: cols, rows: kern.rows, exact: kern.exact, name: 'kernel_pmu', exportKeys: kern.columns, className: 'pi-aicore-kernels', sort: { key: 'total_us', desc: true } }).el
  );
}
