/**
 * Compare: this profile against another served one (baseline -> changed run).  The step delta
 * as a waterfall whose in-step bars add up exactly to it, the op types added / removed / faster /
 * slower, and the comparison's verdict, all from `GET api/compare` (the JSON of
 * `profinsight compare --format json`).
 */
import { append, clear, h } from '../dom';
import { barOption, Chart, esc } from '../widgets/chart';
import { fmtDeltaUs, fmtPct, fmtUs, isNum, tr } from '../widgets/format';
import { cards, empty, errorBox, fill, section } from '../widgets/parts';
import { columnsFor, DataTable } from '../widgets/table';
import type { CompareAnswer } from '../api';
import type { View, ViewContext, ViewState } from './types';
import { modulesSection } from './compare_modules';

const STATUSES = ['added', 'removed', 'slower', 'faster', 'unchanged'];

export function create(): View {
  const charts: Chart[] = [];
  let apply: ((s?: ViewState) => void) | null = null;
  return {
    show(s?: ViewState) {
      apply?.(s);
    },
    async mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const ids = (await ctx.api.profiles()).profiles.map(p => p.id);
      if (ids.length < 2) {
        el.appendChild(empty(t('ui.compare.need_two')));
        return;
      }
      const pick = (cls: string, chosen: string) => {
        const s = h('select', { class: cls });
        for (const id of ids) {
          const o = h('option', { value: id }, id);
          o.selected = id === chosen;
          s.appendChild(o);
        }
        return s;
      };
      const base = pick('pi-cmp-base', ctx.profile.id);
      // the profile served next to this one is the likeliest partner (serve BASE CHANGED)
      const here = ids.indexOf(ctx.profile.id);
      const other = pick('pi-cmp-other', ids[(here + 1) % ids.length] === ctx.profile.id ? ids[0] : ids[(here + 1) % ids.length]);
      // a run compared with itself is no comparison: each picker disables the other's choice
      const exclude = () => {
        for (const [s, o] of [
          [base, other],
          [other, base]
        ]) {
          for (const opt of Array.from(s.options)) {
            opt.disabled = opt.value === o.value;
          }
        }
      };
      base.addEventListener('change', exclude);
      other.addEventListener('change', exclude);
      exclude();
      const swap = h('button', { class: 'pi-cmp-swap', title: t('ui.compare.swap') }, '⇄');
      const go = h('button', { class: 'pi-cmp-go pi-primary' }, t('ui.compare.run'));
      const body = h('div', { class: 'pi-cmp-body' });
      append(el, [
        h(
          'div',
          { class: 'pi-controls' },
          h('label', { class: 'pi-control' }, h('span', {}, t('ui.compare.base')), base),
          swap,
          h('label', { class: 'pi-control' }, h('span', {}, t('ui.compare.other')), other),
          go
        ),
        body
      ]);
      let ran = '';
      const run = () => {
        ran = `${base.value}\u0000${other.value}`;
        ctx.setState?.({ base: base.value, other: other.value });
        return fill(
          body,
          t,
          async () => {
            charts.splice(0).forEach(c => c.dispose());
            const d = await ctx.api.compare(base.value, [other.value]);
            return render(ctx, d, charts);
          },
          errorBox
        );
      };
      swap.addEventListener('click', () => {
        const b = base.value;
        base.value = other.value;
        other.value = b;
        exclude();
        void run();
      });
      go.addEventListener('click', () => void run());
      /** A link's (or Back/Forward's) pair of runs: served ids, never a run with itself; no
       * state keeps what is shown (a tab click). */
      apply = (s?: ViewState) => {
        if (s && s.base && s.other && s.base !== s.other && ids.includes(s.base) && ids.includes(s.other)) {
          base.value = s.base;
          other.value = s.other;
          exclude();
        }
        if (`${base.value}\u0000${other.value}` !== ran) {
          void run();
        }
      };
    },
    dispose() {
      charts.splice(0).forEach(c => c.dispose());
    }
  };
}

function render(ctx: ViewContext, d: CompareAnswer, charts: Chart[]): Node[] {
  const t = ctx.t;
  // the records are read as every view reads rows (cells checked where they are drawn)
  const s: Record<string, any> | undefined = (d.summary || [])[0];
  const [wfName] = Object.keys(d.waterfalls || {});
  const wf: Record<string, any>[] = wfName ? d.waterfalls[wfName] : [];
  if (!s || !wf.length) {
    return [empty(t('ui.compare.nothing'))];
  }
  const out: Node[] = [];
  const speed: unknown = d.steps?.[1]?.speedup_vs_base_x;
  out.push(
    section(
      t('ui.compare.result', { from: s.from_run, to: s.to_run }),
      cards([
        { key: 'from', label: t('ui.compare.from_step', { run: s.from_run }), value: fmtUs(s.from_step_us) },
        { key: 'to', label: t('ui.compare.to_step', { run: s.to_run }), value: fmtUs(s.to_step_us) },
        {
          key: 'delta',
          label: t('ui.compare.delta'),
          value: fmtDeltaUs(s.delta_step_us),
          sub: isNum(s.delta_step_share_of_from_step_ratio) ? `${s.delta_step_share_of_from_step_ratio > 0 ? '+' : ''}${fmtPct(s.delta_step_share_of_from_step_ratio)}` : undefined
        },
        { key: 'speedup', label: t('ui.compare.speedup'), value: isNum(speed) ? `${speed.toFixed(2)}x` : '' }
      ]),
      h('p', { class: 'pi-cmp-verdict' }, String(s.verdict ?? ''))
    )
  );
  // waterfall: baseline step, each in-step component's change, changed step
  const inStep = wf.filter(r => r.in_step);
  const label = (r: Record<string, any>) => tr(t, `ui.compare.component.${r.component}`, String(r.label ?? r.component));
  const names = [t('ui.compare.from_bar', { run: s.from_run })].concat(inStep.map(label), [t('ui.compare.to_bar', { run: s.to_run })]);
  const base: (number | null)[] = [];
  const up: (number | null)[] = [];
  const down: (number | null)[] = [];
  const ends: (number | null)[] = [];
  let level = s.from_step_us;
  base.push(null);
  up.push(null);
  down.push(null);
  ends.push(s.from_step_us);
  for (const r of inStep) {
    const dv = isNum(r.delta_us) ? r.delta_us : 0;
    const next = level + dv;
    base.push(Math.min(level, next));
    up.push(dv > 0 ? dv : null);
    down.push(dv < 0 ? -dv : null);
    ends.push(null);
    level = next;
  }
  base.push(null);
  up.push(null);
  down.push(null);
  ends.push(s.to_step_us);
  const c = new Chart(Math.max(200, 40 + names.length * 26));
  charts.push(c);
  const opt = barOption(
    names,
    [
      { name: '_base', values: base },
      { name: t('ui.compare.step'), values: ends },
      { name: t('ui.compare.slower'), values: up },
      { name: t('ui.compare.faster'), values: down }
    ],
    fmtUs,
    true
  );
  opt.series[0].itemStyle = { color: 'transparent' };
  opt.series[0].emphasis = { disabled: true };
  opt.series[0].tooltip = { show: false };
  opt.series[1].itemStyle = { color: '#4e79a7' };
  opt.series[2].itemStyle = { color: '#e15759' };
  opt.series[3].itemStyle = { color: '#59a14f' };
  opt.legend = { top: 0, data: [t('ui.compare.step'), t('ui.compare.slower'), t('ui.compare.faster')] };
  opt.tooltip.formatter = (ps: any[]) => {
    const i = ps[0]?.dataIndex ?? 0;
    const r = i > 0 && i <= inStep.length ? inStep[i - 1] : null;
    return r ? `${esc(names[i])}: ${esc(fmtDeltaUs(r.delta_us))}` : `${esc(names[i])}: ${esc(fmtUs(ends[i] as number))}`;
  };
  c.set(opt);
  const sumIn = inStep.reduce((a, r) => a + (isNum(r.delta_us) ? r.delta_us : 0), 0);
  const rows = wf.map(r => ({ ...r, component_label: label(r) }));
  const wfTable = new DataTable({
    t,
    columns: [
      { key: 'component_label', label: t('ui.compare.component') },
      { key: 'from_us', label: t('ui.compare.from', { run: s.from_run }), numeric: true, format: fmtUs },
      { key: 'to_us', label: t('ui.compare.to', { run: s.to_run }), numeric: true, format: fmtUs },
      { key: 'delta_us', label: t('ui.compare.delta_col'), numeric: true, format: fmtDeltaUs },
      { key: 'share_of_step_delta_ratio', label: t('ui.col.share_of_step_delta_ratio'), numeric: true, format: v => fmtPct(v) },
      { key: 'in_step', label: t('ui.compare.in_step'), format: v => (v ? '✓' : t('ui.compare.outside')) }
    ],
    rows,
    name: 'waterfall',
    className: 'pi-cmp-waterfall'
  });
  out.push(
    section(
      t('ui.compare.waterfall'),
      h('p', { class: 'pi-note' }, t('ui.compare.waterfall_note')),
      c.el,
      wfTable.el,
      h('div', { class: 'pi-cmp-sum' }, t('ui.compare.sum', { sum: fmtDeltaUs(sumIn), delta: fmtDeltaUs(s.delta_step_us) }))
    )
  );
  // ops by type: added / removed / slower / faster
  const ops: Record<string, any>[] = (d.ops_by_type || []).filter((r: any) => r.pair === s.pair || !r.pair);
  const counts = new Map<string, number>();
  for (const r of ops) {
    counts.set(r.status, (counts.get(r.status) || 0) + 1);
  }
  const tableBox = h('div');
  let status = '';
  const chips = h('div', { class: 'pi-chips' });
  const drawOps = () => {
    clear(tableBox);
    const shown = status ? ops.filter(r => r.status === status) : ops;
    tableBox.appendChild(
      new DataTable({
        t,
        columns: columnsFor(t, Object.keys(ops[0] || {}), shown, ['pair']).map(col =>
          col.key === 'status' ? { ...col, format: (v: any) => tr(t, `ui.compare.status.${v}`, String(v)) } : col.key.startsWith('delta_') && col.key.endsWith('_us') ? { ...col, format: fmtDeltaUs } : col
        ),
        rows: shown,
        name: 'ops_by_type',
        className: 'pi-cmp-ops'
      }).el
    );
    for (const b of Array.from(chips.children)) {
      b.classList.toggle('pi-active', (b as HTMLElement).dataset.status === status);
    }
  };
  for (const st of [''].concat(STATUSES)) {
    const n = st ? counts.get(st) || 0 : ops.length;
    const b = h('button', { class: `pi-chip pi-status-${st || 'all'}`, 'data-status': st }, `${st ? tr(t, `ui.compare.status.${st}`, st) : t('ui.compare.all')} (${n})`);
    b.addEventListener('click', () => {
      status = st;
      drawOps();
    });
    chips.appendChild(b);
  }
  drawOps();
  out.push(section(t('ui.compare.ops'), ops.length ? [chips, tableBox] : [empty(t('ui.compare.no_ops'))]));
  out.push(modulesSection(d, s.pair, t));
  return out;
}
