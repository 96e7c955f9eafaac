/**
 * The details panel of a selected slice: where it is (rank, unit, track), when, its launch
 * arrows (each a button that selects the other end) and every column of its source row.
 */
import { append, clear, fmtBytes, fmtDuration, fmtNumber, h } from '../dom';
import type { Json } from '../generated/wire';
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
  /** absolute epoch ns of relative 0 (a string): absolute times in the row show from it */
  origin?: string;
  /**
   * line the ranks up on this slice when it is a collective (a multi-rank timeline passes it):
   * its start or its end
   */
  onAlign?: (edge: 'start' | 'end') => void;
}

/** Whether the slice is a collective (a comm_ops row, or the kernel on a stream it is drawn as). */
export function isCollective(m: Mark, det: DetailsResult | null): boolean {
  if (m.kind === 'comm_op') {
    return true;
  }
  const row = det && 'row' in det && det.row ? det.row : null;
  return m.kind === 'device_task' && !!row && row.kind === 'communication';
}

/** Columns holding absolute times (epoch ns), shown as time from the profile start. */
const ABSOLUTE = /(^|_)(start|end|ts|timestamp)(_ns)?$/;

/**
 * A source-row cell as a person reads it, and its raw value when they differ (shown on hover):
 * ratios as %, `*_ns` durations in us/ms, absolute times from the profile start, `*_bytes` in
 * KiB/MiB/GiB; everything else as recorded.
 */
export function cellText(key: string, v: Json, origin?: string): { text: string; raw: string | null } {
  const raw = typeof v === 'object' ? JSON.stringify(v) : String(v);
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : null;
  if (n === null || !Number.isFinite(n)) {
    return { text: raw, raw: null };
  }
  let text: string | null = null;
  if (key.endsWith('_ratio') || key.endsWith('_rate')) {
    text = `${(n * 100).toFixed(2)}%`;
  } else if (ABSOLUTE.test(key) && origin) {
    try {
      const rel = Number(BigInt(String(v).split('.')[0]) - BigInt(origin));
      text = `${fmtDuration(rel)} (from profile start)`;
    } catch {
      text = null;
    }
  } else if (key.endsWith('_ns')) {
    text = fmtDuration(n);
  } else if (key.endsWith('_bytes') || key === 'bytes') {
    text = fmtBytes(n);
  } else if (key.endsWith('_us')) {
    text = fmtDuration(n * 1e3);
  } else if (typeof v === 'number' && Math.abs(n) >= 1e4 && !/(^|_)id$|uid$|_idx$/.test(key)) {
    // numbers only: a text column of digits (a communication group's hash) is a name, and
    // reading it as a number would round it
    text = fmtNumber(n);
  }
  return text === null || text === raw ? { text: raw, raw: null } : { text, raw };
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
    const c = cellText(k, v, o.origin);
    append(args, [
      h('dt', {}, k),
      h('dd', { class: k === 'call_stack' || k === 'stack' ? 'pi-tl-stack' : '', title: c.raw, 'data-raw': c.raw }, c.text)
    ]);
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
  const onAlign = o.onAlign;
  const align =
    onAlign && isCollective(m, det)
      ? h(
          'div',
          { class: 'pi-tl-align-btns', title: t('ui.timeline.ranks.align_help') },
          h('button', { class: 'pi-tl-btn pi-tl-align-start', onclick: () => onAlign('start') }, t('ui.timeline.ranks.align_start')),
          h('button', { class: 'pi-tl-btn pi-tl-align-end', onclick: () => onAlign('end') }, t('ui.timeline.ranks.align_end'))
        )
      : null;
  append(el, [
    h(
      'div',
      { class: 'pi-tl-details-head' },
      h('span', { class: 'pi-tl-details-title' }, m.name),
      h('button', { class: 'pi-tl-close', title: close, 'aria-label': close, onclick: o.onClose }, '×')
    ),
    facts,
    align,
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
