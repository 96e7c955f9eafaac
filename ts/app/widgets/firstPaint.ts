/**
 * The first paint of a run (`GET api/profiles/ID/summary`), shown under the load progress while
 * the import runs: what the run is (format, level, ranks, files, bytes) and, where the profiler
 * wrote its own summaries, the step in numbers and the communication per type from them.  Their
 * source is said in so many words: the views that follow compute the same figures from the
 * tasks.
 */
import { fmtBytes, fmtNumber, h } from '../dom';
import type { ReadyAnswer, SummaryAnswer } from '../generated/wire';
import { fmtPct, fmtUs, isNum, Translate } from './format';
import { Card, cards, section, withTerms } from './parts';
import type { Chart } from './chart';
import { stepsChart } from './steps';
import { payloadTable } from './table';

type Row = Record<string, any>;

function total(rows: Row[], col: string): number {
  return rows.map(r => r[col]).filter(isNum).reduce((a, b) => a + b, 0);
}

/** The key numbers of the vendor's step rows: mean step time and the shares of the step. */
export function vendorCards(t: Translate, rows: Row[]): Card[] {
  const steps = rows.filter(r => isNum(r.step_us) && r.step_us > 0);
  if (!steps.length) {
    return [];
  }
  const sum = total(steps, 'step_us');
  const share = (col: string) => fmtPct(total(steps, col) / sum);
  return [
    { key: 'step', label: t('ui.overview.step_time'), value: fmtUs(sum / steps.length), sub: t('ui.first.rank_steps', { n: steps.length }) },
    { key: 'computing', label: t('ui.overview.computing'), value: share('computing_us') },
    { key: 'comm', label: t('ui.overview.comm'), value: share('comm_not_overlapped_us') },
    { key: 'free', label: t('ui.overview.free'), value: share('free_us') }
  ];
}

/** The first paint of `s`; its charts go to `charts` (the caller disposes them with the page). */
export function firstPaint(s: SummaryAnswer, t: Translate, charts: Chart[] = []): HTMLElement {
  const facts = [
    s.format + (s.level ? ` ${s.level}` : ''),
    t('ui.ranks_steps', { ranks: s.rank_count, steps: s.vendor ? new Set(s.vendor.steps.rows.map(r => r.step)).size : '?' }),
    t('ui.first.files', { n: fmtNumber(s.files), size: fmtBytes(s.size_bytes) })
  ].join(' · ');
  const out = h('div', { class: 'pi-first' }, h('div', { class: 'pi-first-facts' }, facts));
  const v = s.vendor;
  if (!v) {
    out.appendChild(h('p', { class: 'pi-note' }, s.vendor_error ? t('ui.first.unreadable', { why: s.vendor_error }) : t('ui.first.none')));
    return out;
  }
  out.appendChild(h('p', { class: 'pi-note pi-first-source' }, t('ui.first.source', { files: v.files.join(', ') })));
  const items = vendorCards(t, v.steps.rows);
  if (items.length) {
    out.appendChild(section(t('ui.overview.key_numbers'), cards(withTerms(t, items))));
  }
  const steps = v.steps.rows.filter(r => isNum(r.step_us) && r.step_us > 0);
  if (steps.length) {
    // the same picture as the Overview's, sized to the number of steps; the numbers below it
    const table = payloadTable(t, { ...v.steps, rows: steps, exact: undefined }, ['label', 'source', 'host_step_us'], {
      className: 'pi-first-steps',
      pageSize: 50,
      name: 'step_breakdown_vendor'
    });
    out.appendChild(
      section(
        t('ui.first.steps'),
        stepsChart(t, steps, charts),
        h('details', { class: 'pi-first-steps-table' }, h('summary', {}, t('ui.overview.step_table', { n: steps.length })), table.el)
      )
    );
  }
  if (v.comm.rows.length) {
    out.appendChild(section(t('ui.first.comm'), payloadTable(t, v.comm, ['label'], { className: 'pi-first-comm', pageSize: 50, name: 'comm_summary_vendor' }).el));
  }
  return out;
}

/** The ranks imported so far (`GET api/profiles/ID/ready`): their steps from their own tasks. */
export function readyRanks(r: ReadyAnswer, t: Translate, charts: Chart[] = []): HTMLElement {
  const steps = (r.steps ? r.steps.rows : []).filter(x => isNum(x.step_us) && x.step_us > 0);
  const out = h('div', { class: 'pi-first pi-ready' });
  out.appendChild(
    section(
      t('ui.first.ready', { ranks: r.ranks.join(', ') }),
      h('p', { class: 'pi-note' }, t('ui.first.ready_note')),
      steps.length ? cards(withTerms(t, vendorCards(t, steps))) : null,
      steps.length ? stepsChart(t, steps, charts) : null
    )
  );
  return out;
}
