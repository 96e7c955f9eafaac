/**
 * Operators: the op summary grouped by name / type / name+shape / core, on the device or the host,
 * optionally one rank; a top-N chart, the sortable/filterable table, and the details of a row
 * (its shapes or member ops, its slowest calls, a jump to the slowest one on the timeline).
 */
import { append, clear, fmtDuration, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { barOption, Chart } from '../widgets/chart';
import { fmtUs, num, tr } from '../widgets/format';
import { empty, errorBox, fill, section, slowestCall } from '../widgets/parts';
import { columnsFor, DataTable, payloadTable } from '../widgets/table';
import { pmuColumns } from './aicore';
import type { View, ViewContext, ViewState } from './types';

const GROUPS = ['name', 'type', 'name_shape', 'core'];
/** host framework ops have a name and shapes, no op type or core: these groupings are device-only */
const DEVICE_ONLY = ['type', 'core'];

/** Whether grouping `by` on `where` is a pair op_summary answers (the others are disabled). */
export function validPair(by: string, where: string): boolean {
  return where !== 'host' || !DEVICE_ONLY.includes(by);
}
const TOP = 15;
/** columns of the small tables in a row's details */
const SUB_COLUMNS = ['name', 'input_shapes', 'count', 'total_us', 'avg_us', 'max_us'];

const PMU_KEYS = (c: string) => c === 'bound' || c === 'bound_ratio' || c.startsWith('pmu_');

/**
 * The op_summary rows with the PMU ratios and bound type of the same kernel (name, type, core)
 * on `pmu.rank`, and the columns that then exist (op_summary's, then the PMU ones recorded).
 */
function withPmu(p: AnalysisPayload, pmu: { payload: AnalysisPayload; rank: number } | null): { rows: Record<string, any>[]; columns: string[] } {
  const extra = pmu ? pmu.payload.columns.filter(PMU_KEYS) : [];
  if (!pmu || !extra.length || !pmu.payload.rows.length) {
    return { rows: p.rows, columns: p.columns };
  }
  const key = (r: Record<string, unknown>) => `${r.name}\u0000${r.type}\u0000${r.core}`;
  const by = new Map(pmu.payload.rows.filter(r => r.rank === pmu.rank).map(r => [key(r), r]));
  const rows = p.rows.map(r => {
    const k = by.get(key(r));
    return k ? { ...r, ...Object.fromEntries(extra.map(c => [c, k[c]])) } : r;
  });
  const recorded = extra.filter(c => rows.some(r => r[c] !== null && r[c] !== undefined));
  return { rows, columns: [...p.columns, ...recorded] };
}

export function create(): View {
  let chart: Chart | null = null;
  let detailChart: Chart | null = null;
  let apply: ((s?: ViewState) => void) | null = null;
  return {
    show(s?: ViewState) {
      apply?.(s);
    },
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const state: { by: string; where: string; rank: string } = { by: 'name', where: 'device', rank: '' };
      // the table's filter and sort, kept across reloads and in the page address
      const table: { query: string; sort: { key: string; desc: boolean } | null } = { query: '', sort: null };
      let loaded = false;
      /** Tells the host what the view shows, for its link (defaults left out). */
      const report = () =>
        ctx.setState?.({
          by: state.by !== 'name' ? state.by : undefined,
          where: state.where !== 'device' ? state.where : undefined,
          rank: state.rank ? Number(state.rank) : undefined,
          filter: table.query || undefined,
          sort: table.sort ?? undefined
        });
      const selects: Partial<Record<keyof typeof state, HTMLSelectElement>> = {};
      // an option that makes an invalid pair with the other select's choice is disabled, with why
      const markInvalid = () => {
        for (const o of Array.from(selects.by?.options || [])) {
          o.disabled = !validPair(o.value, state.where);
          o.title = o.disabled ? t('ui.operators.device_only') : '';
        }
        for (const o of Array.from(selects.where?.options || [])) {
          o.disabled = !validPair(state.by, o.value);
          o.title = o.disabled ? t('ui.operators.device_only') : '';
        }
      };
      const select = (cls: string, label: string, options: [string, string][], key: keyof typeof state) => {
        const s = h('select', { class: cls, 'aria-label': label });
        selects[key] = s;
        for (const [v, text] of options) {
          const o = h('option', { value: v }, text);
          o.selected = state[key] === v;
          s.appendChild(o);
        }
        s.addEventListener('change', () => {
          state[key] = s.value;
          markInvalid();
          Object.assign(table, { query: '', sort: null }); // another grouping has other columns
          void load();
        });
        return h('label', { class: 'pi-control' }, h('span', {}, label), s);
      };
      const controls = h(
        'div',
        { class: 'pi-controls' },
        select('pi-op-by', t('ui.operators.group_by'), GROUPS.map(g => [g, t(`ui.operators.by.${g}`)]), 'by'),
        select('pi-op-where', t('ui.operators.where'), [['device', t('ui.operators.device')], ['host', t('ui.operators.host')]], 'where'),
        ctx.profile.ranks.length > 1
          ? select(
              'pi-op-rank',
              t('ui.common.rank'),
              [['', t('ui.common.all_ranks')] as [string, string]].concat(ctx.profile.ranks.map(r => [String(r), String(r)] as [string, string])),
              'rank'
            )
          : null
      );
      const body = h('div', { class: 'pi-op-body' });
      markInvalid();
      append(el, [controls, body]);

      const load = () => {
        loaded = true;
        report();
        return fill(
          body,
          t,
          async () => {
            const params: Record<string, string> = { by: state.by, where: state.where };
            if (state.rank) {
              params.rank = state.rank;
            }
            const p = await ctx.api.analysis(ctx.profile.id, 'op_summary', params);
            // kernels by name on one rank: each row's PMU ratios and bound type (kernel_pmu is per
            // rank and kernel; over several ranks they would need weighing, the AI Core view's job)
            const rank = state.rank !== '' ? Number(state.rank) : ctx.profile.ranks.length === 1 ? ctx.profile.ranks[0] : null;
            const pmu =
              state.where === 'device' && state.by === 'name' && rank !== null
                ? await ctx.api.analysis(ctx.profile.id, 'kernel_pmu').catch(() => null)
                : null;
            return render(p, params, pmu && rank !== null ? { payload: pmu, rank } : null);
          },
          errorBox
        );
      };

      const render = (p: AnalysisPayload, params: Record<string, string>, pmu: { payload: AnalysisPayload; rank: number } | null): Node[] => {
        chart?.dispose();
        chart = null;
        if (!p.rows.length) {
          return [empty(state.where === 'host' ? t('ui.operators.no_host_ops') : t('ui.operators.no_ops'))];
        }
        const total = state.where === 'host' ? 'device_total_us' : 'total_us';
        const top = p.rows.slice(0, TOP);
        chart = new Chart(Math.max(110, 30 + top.length * 17));
        const series = [{ name: t(`ui.col.${total}`), values: top.map(r => num(r[total])) }];
        if (state.where === 'host') {
          series.push({ name: t('ui.col.host_total_us'), values: top.map(r => num(r.host_total_us)) });
        }
        chart.set(barOption(top.map(r => String(r.label ?? '')), series, fmtUs));
        const details = h('div', { class: 'pi-op-details' }, h('div', { class: 'pi-note' }, t('ui.operators.select_hint')));
        const { rows, columns } = withPmu(p, pmu);
        const sort = table.sort && columns.includes(table.sort.key) ? table.sort : null;
        const tbl = payloadTable(t, p, ['label'], {
          rows,
          exportKeys: columns,
          columns: [...columnsFor(t, p.columns, rows, ['label']), ...(columns.length > p.columns.length ? pmuColumns(t, columns, rows) : [])],
          className: 'pi-op-table',
          onSelect: row => showDetails(details, row, params),
          query: table.query,
          sort,
          onView: v => {
            table.query = v.query;
            table.sort = v.sort;
            report();
          }
        });
        return [
          section(t('ui.operators.top', { n: top.length }), chart.el),
          h('div', { class: 'pi-split' }, section(t('ui.operators.table'), tbl.el), details)
        ];
      };

      const showDetails = (box: HTMLElement, row: Record<string, any>, params: Record<string, string>) => {
        detailChart?.dispose();
        detailChart = null;
        clear(box);
        const title = String(row.name ?? row.type ?? row.core ?? row.label ?? '');
        const facts = h('dl', { class: 'pi-facts' });
        for (const [k, v] of Object.entries(row)) {
          if (k === 'label' || v === null || v === undefined) {
            continue;
          }
          append(facts, [h('dt', {}, tr(t, `ui.col.${k}`, k)), h('dd', {}, typeof v === 'number' && k.endsWith('_us') ? fmtUs(v) : typeof v === 'number' && k.endsWith('_ratio') ? `${(v * 100).toFixed(1)}%` : String(v))]);
        }
        const jumpBox = h('div', { class: 'pi-op-jump' });
        const members = h('div', { class: 'pi-op-members' });
        append(box, [h('h3', { class: 'pi-section-title pi-op-details-title' }, title), facts, jumpBox, members]);
        const rank = params.rank ? Number(params.rank) : null;
        // the slowest call on the timeline: only names are timeline slices
        if (row.name !== undefined && row.name !== null) {
          void fill(
            jumpBox,
            t,
            async () => {
              const call = await slowestCall(ctx.api, ctx.profile.id, String(row.name), rank);
              if (!call) {
                return empty(t('ui.operators.no_calls'));
              }
              return h(
                'div',
                { class: 'pi-row' },
                h('span', {}, t('ui.operators.slowest', { dur: fmtDuration(call.dur_ns), rank: call.rank, n: call.calls })),
                h(
                  'button',
                  { class: 'pi-jump', onclick: () => ctx.navigate('timeline', { rank: call.rank, start_ns: call.start_ns, end_ns: call.end_ns, select: call.select }) },
                  t('ui.common.show_on_timeline')
                )
              );
            },
            errorBox
          );
        }
        // what the row is made of: shapes of a name, op names of a type or core
        const sub =
          state.by === 'name' && state.where === 'device'
            ? { by: 'name_shape', key: 'name', label: t('ui.operators.shapes') }
            : state.by === 'type' || state.by === 'core'
              ? { by: 'name', key: state.by, label: t('ui.operators.members') }
              : null;
        if (sub) {
          void fill(
            members,
            t,
            async () => {
              const p = await ctx.api.analysis(ctx.profile.id, 'op_summary', { ...params, by: sub.by });
              const rows = p.rows.filter(r => r[sub.key] === row[sub.key]);
              const tbl = new DataTable({
                t,
                columns: columnsFor(t, p.columns, rows).filter(c => SUB_COLUMNS.includes(c.key) && c.key !== sub.key),
                rows,
                pageSize: 50
              });
              return section(sub.label, tbl.el);
            },
            errorBox
          );
        }
      };
      /** A link's (or Back/Forward's) state: the pair checked as the form checks it; no state
       * keeps what is shown (a tab click). */
      apply = (s?: ViewState) => {
        if (!s) {
          if (!loaded) {
            void load();
          }
          return;
        }
        const by = s.by && GROUPS.includes(s.by) ? s.by : 'name';
        const where = s.where === 'host' && validPair(by, 'host') ? 'host' : 'device';
        const rank = typeof s.rank === 'number' && ctx.profile.ranks.includes(s.rank) && selects.rank ? String(s.rank) : '';
        const next = { query: s.filter ?? '', sort: s.sort ?? null };
        const same = by === state.by && where === state.where && rank === state.rank;
        if (loaded && same && next.query === table.query && JSON.stringify(next.sort) === JSON.stringify(table.sort)) {
          return;
        }
        Object.assign(state, { by, where, rank });
        Object.assign(table, next);
        for (const key of ['by', 'where', 'rank'] as const) {
          if (selects[key]) {
            selects[key]!.value = state[key];
          }
        }
        markInvalid();
        void load();
      };
    },
    dispose() {
      chart?.dispose();
      detailChart?.dispose();
    }
  };
}
