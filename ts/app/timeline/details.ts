/**
 * The details panel of a selected slice: where it is (rank, unit, track), when, its launch
 * arrows (each a button that selects the other end) and every column of its source row.
 */
import { append, clear, fmtDuration, h } from '../dom';
import type { DetailsResult } from './data';
import type { Row } from './model';
import type { Flow, Mark } from './renderer';

export interface DetailsOptions {
  t: (key: string, vars?: Record<string, string | number>) => string;
  /** the row the slice is drawn in (its own, or its collapsed unit's or rank's header) */
  row: Row | null;
  /** a launch arrow's other end was clicked */
  onFlow: (other: Mark) => void;
  onClose: () => void;
}

/** Columns of the source row shown in the facts above, not again among the arguments. */
const SHOWN = new Set(['name', 'rank', 'start_ns', 'dur_ns']);

export function hideDetails(el: HTMLElement): void {
  el.hidden = true;
  clear(el);
}

export function renderDetails(el: HTMLElement, m: Mark, det: DetailsResult | null, flows: Flow[], o: DetailsOptions): void {
  const t = o.t;
  clear(el);
  el.hidden = false;
  const facts = h('dl', { class: 'pi-tl-facts' });
  const fact = (k: string, v: string) => append(facts, [h('dt', {}, k), h('dd', {}, v)]);
  const track = o.row;
  fact(t('ui.timeline.d.track'), `${t('ui.timeline.rank', { rank: m.rank })} · ${track?.unit?.name ?? ''} · ${track?.label ?? m.track}`);
  fact(t('ui.timeline.d.start'), fmtDuration(m.start_ns));
  fact(t('ui.timeline.d.duration'), fmtDuration(m.dur_ns));
  fact(t('ui.timeline.d.end'), fmtDuration(m.start_ns + m.dur_ns));
  fact(t('ui.timeline.d.kind'), `${m.kind} #${m.id}`);
  const args = h('dl', { class: 'pi-tl-facts pi-tl-args' });
  const row = det && 'row' in det && det.row ? det.row : {};
  for (const [k, v] of Object.entries(row)) {
    if (SHOWN.has(k) || v === null || v === undefined || v === '') {
      continue;
    }
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    append(args, [h('dt', {}, k), h('dd', { class: k === 'call_stack' || k === 'stack' ? 'pi-tl-stack' : '' }, text)]);
  }
  const flowList = h('ul', { class: 'pi-tl-flows' });
  for (const f of flows) {
    const other = f.from.kind === m.kind && f.from.id === m.id ? f.to : f.from;
    flowList.appendChild(
      h(
        'li',
        {},
        h('button', { class: 'pi-tl-flow', onclick: () => o.onFlow(other) }, `${f.from === other ? '←' : '→'} ${other.name}`),
        ` ${fmtDuration(other.dur_ns)}`
      )
    );
  }
  const close = t('ui.timeline.close');
  append(el, [
    h(
      'div',
      { class: 'pi-tl-details-head' },
      h('span', { class: 'pi-tl-details-title' }, m.name),
      h('button', { class: 'pi-tl-close', title: close, 'aria-label': close, onclick: o.onClose }, '×')
    ),
    facts,
    flows.length ? h('div', { class: 'pi-tl-sub' }, t('ui.timeline.d.flows', { n: flows.length })) : null,
    flows.length ? flowList : null,
    det && 'error' in det && det.error ? h('div', { class: 'pi-error-message' }, errorText(det.error)) : null,
    args.childNodes.length ? h('div', { class: 'pi-tl-sub' }, t('ui.timeline.d.args')) : null,
    args
  ]);
}

/** `String(error.message || error)`, as the panel always showed it. */
function errorText(e: unknown): string {
  const msg = e !== null && typeof e === 'object' && 'message' in e ? (e as { message: unknown }).message : null;
  return String(msg || e);
}
