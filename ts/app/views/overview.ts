/**
 * Overview: the step in numbers (step time, compute / communication / free shares, utilisation,
 * top op type), the step breakdown per rank and step, and the advisor's findings, each with a
 * jump to the time window its evidence points at on the timeline.
 */
import { clear, h } from '../dom';
import type { AnalysisPayload } from '../api';
import { Chart } from '../widgets/chart';
import { fmtPct, fmtUs, isNum, num } from '../widgets/format';
import { Card, cards, empty, errorBox, loading, section, withTerms } from '../widgets/parts';
import { findingCards } from '../widgets/findings';
import { payloadTable } from '../widgets/table';
import { stepsChart, stepsKind } from '../widgets/steps';
import type { View, ViewContext } from './types';

function mean(rows: Record<string, any>[], col: string): number | null {
  const v = rows.map(r => r[col]).filter(isNum);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

function sum(rows: Record<string, any>[], col: string): number {
  return rows.map(r => r[col]).filter(isNum).reduce((a, b) => a + b, 0);
}

export function create(): View {
  const charts: Chart[] = [];
  return {
    async mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const id = ctx.profile.id;
      el.appendChild(loading(t));
      const get = (name: string, params = {}) => ctx.api.analysis(id, name, params);
      const settle = <T>(p: Promise<T>) => p.then(v => ({ ok: true as const, v }), e => ({ ok: false as const, e }));
      const [sb, util, types, adv] = await Promise.all([
        settle(get('step_breakdown')),
        settle(get('utilization')),
        settle(get('op_summary', { by: 'type', top: 1 })),
        settle(get('advise', { lang: ctx.lang }))
      ]);
      clear(el);
      if (!sb.ok) {
        el.appendChild(errorBox(sb.e, t));
        return;
      }
      const steps = sb.v.rows.filter(r => isNum(r.step_us) && r.step_us > 0);
      el.appendChild(keyNumbers(ctx, steps, util.ok ? util.v : null, types.ok ? types.v : null));
      if (steps.length) {
        const kind = stepsKind(steps);
        const note = kind === 'bars' ? 'ui.overview.breakdown_note' : kind === 'line' ? 'ui.overview.line_note' : 'ui.overview.heat_note';
        const table = payloadTable(t, { ...sb.v, rows: steps, exact: undefined }, ['label'], { className: 'pi-steps-table', pageSize: 50 });
        el.appendChild(
          section(
            t('ui.overview.breakdown'),
            h('p', { class: 'pi-note' }, t(note, { n: steps.length })),
            stepsChart(t, steps, charts),
            h('details', { class: 'pi-steps-details', open: kind === 'bars' ? null : true }, h('summary', {}, t('ui.overview.step_table', { n: steps.length })), table.el)
          )
        );
      } else {
        el.appendChild(section(t('ui.overview.breakdown'), empty(t('ui.overview.no_steps'))));
      }
      el.appendChild(
        section(t('ui.overview.findings'), adv.ok ? findings(ctx, adv.v) : errorBox(adv.e, t))
      );
    },
    dispose() {
      charts.splice(0).forEach(c => c.dispose());
    }
  };
}

function keyNumbers(
  ctx: ViewContext,
  steps: Record<string, any>[],
  util: AnalysisPayload | null,
  types: AnalysisPayload | null
): HTMLElement {
  const t = ctx.t;
  const items: Card[] = [];
  const step = mean(steps, 'step_us');
  const total = sum(steps, 'step_us');
  if (step !== null) {
    const worst = steps.reduce((a, b) => (b.step_us > a.step_us ? b : a));
    // compute first: the share of the step the device computed is the headline, not "busy"
    items.push({ key: 'computing', label: t('ui.overview.computing'), value: fmtPct(sum(steps, 'computing_us') / total), sub: fmtUs(mean(steps, 'computing_us')) });
    items.push({
      key: 'step',
      label: t('ui.overview.step_time'),
      value: fmtUs(step),
      sub:
        steps.length > 1
          ? t('ui.overview.step_sub', { n: steps.length, max: fmtUs(worst.step_us), rank: worst.rank, step: worst.step ?? '-' })
          : t('ui.overview.step_one', { rank: worst.rank, step: worst.step ?? '-' })
    });
    items.push({
      key: 'comm',
      label: t('ui.overview.comm'),
      value: fmtPct(sum(steps, 'comm_not_overlapped_us') / total),
      sub: fmtUs(mean(steps, 'comm_not_overlapped_us'))
    });
    items.push({ key: 'free', label: t('ui.overview.free'), value: fmtPct(sum(steps, 'free_us') / total), sub: fmtUs(mean(steps, 'free_us')) });
  }
  const urows = util ? util.rows.filter(r => isNum(r.busy_ratio)) : [];
  if (urows.length) {
    items.push({
      key: 'util',
      label: t('ui.overview.utilization'),
      value: fmtPct(mean(urows, 'busy_ratio')),
      sub: t('ui.overview.compute_ratio', { v: fmtPct(mean(urows, 'compute_ratio')) })
    });
  }
  const top = types && types.rows[0];
  if (top) {
    items.push({
      key: 'top_type',
      label: t('ui.overview.top_type'),
      value: String(top.type ?? ''),
      sub: `${fmtUs(num(top.total_us))} · ${t('ui.overview.of_compute', { v: fmtPct(num(top.share_of_compute_ratio)) })}`
    });
  }
  if (!items.length) {
    return empty(t('ui.overview.no_numbers'));
  }
  return section(t('ui.overview.key_numbers'), cards(withTerms(t, items)));
}

function findings(ctx: ViewContext, adv: AnalysisPayload): HTMLElement {
  return findingCards(adv.rows, {
    t: ctx.t,
    onJump: w => ctx.navigate('timeline', { rank: w.rank, start_ns: w.start_ns, end_ns: w.end_ns, step: w.step })
  });
}
