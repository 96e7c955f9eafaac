/** Small building blocks the analysis views share: sections, key-number cards, states. */
import { append, clear, h } from '../dom';
import { Api, ApiError } from '../api';
import { termText, Translate } from './format';

type Child = Node | string | null | undefined | false;

export function section(title: string, ...children: (Child | Child[])[]): HTMLElement {
  const el = h('section', { class: 'pi-section' }, h('h3', { class: 'pi-section-title' }, title));
  append(el, children);
  return el;
}

export function loading(t: Translate): HTMLElement {
  return h('div', { class: 'pi-view-loading', 'data-state': 'loading' }, h('span', { class: 'pi-spinner' }), t('ui.common.loading'));
}

export function empty(text: string): HTMLElement {
  return h('div', { class: 'pi-empty pi-view-empty' }, text);
}

export interface Card {
  label: string;
  value: string;
  sub?: string;
  key?: string;
  /** the glossary term the figure is (its label shows the definition on hover) */
  term?: string;
  /** the definition text, when the card's maker has it (`termText`) */
  termText?: string | null;
}

/** The glossary term of each key-number card (Overview, first paint): its label explains it. */
export const CARD_TERMS: Record<string, string> = {
  step: 'step',
  computing: 'compute',
  comm: 'not_overlapped',
  free: 'device_idle',
  util: 'device_busy'
};

/** `items` with the glossary definition of each known card key, in `t`'s language. */
export function withTerms(t: Translate, items: Card[]): Card[] {
  return items.map(c => {
    const term = c.term || (c.key ? CARD_TERMS[c.key] : undefined);
    return term ? { ...c, term, termText: termText(t, term) } : c;
  });
}

export function cards(items: Card[]): HTMLElement {
  return h(
    'div',
    { class: 'pi-cards' },
    items.map(c =>
      h(
        'div',
        { class: 'pi-card', 'data-key': c.key || null },
        c.termText
          ? h('div', { class: 'pi-card-label pi-term', 'data-term': c.term || null, title: c.termText, tabindex: 0 }, c.label)
          : h('div', { class: 'pi-card-label' }, c.label),
        h('div', { class: c.value.length > 24 ? 'pi-card-value pi-card-value-long' : 'pi-card-value', title: c.value }, c.value),
        c.sub ? h('div', { class: 'pi-card-sub' }, c.sub) : null
      )
    )
  );
}

/** Replaces `el`'s content with a loading line, then with what `build` returns (or its error). */
export async function fill(
  el: HTMLElement,
  t: Translate,
  build: () => Promise<Node | Node[]>,
  errorBox: (e: unknown, t: Translate) => HTMLElement
): Promise<void> {
  clear(el);
  el.appendChild(loading(t));
  try {
    const out = await build();
    clear(el);
    append(el, Array.isArray(out) ? out : [out]);
  } catch (e) {
    clear(el);
    el.appendChild(errorBox(e, t));
  }
}

/** `a + b` of nanosecond strings/numbers, exact (epoch ns exceed 2^53). */
export function addNs(a: string | number, b: string | number): string {
  return (BigInt(String(a).split('.')[0]) + BigInt(Math.round(Number(b)))).toString();
}

/** The slowest call of an operator, as the timeline's navigation contract takes it. */
export interface SlowestCall {
  rank: number;
  start_ns: string;
  end_ns: string;
  select: { kind: string; rank: number; id: number; name: string };
  dur_ns: number;
  calls: number;
}

/**
 * The slowest call of operator `name` on the timeline (a search of the timeline index, exact
 * name): `{rank, start_ns, end_ns, select}` with absolute ns as strings, or null.
 */
export async function slowestCall(api: Api, profileId: string, name: string, rank?: number | null): Promise<SlowestCall | null> {
  const r = await api.timeline(profileId, 'search', { q: name, limit: 5000 });
  const hits = (r.hits || []).filter(
    x => x.name === name && (rank === undefined || rank === null || x.rank === rank) && x.kind !== 'trace_slice'
  );
  if (!hits.length) {
    return null;
  }
  const best = hits.reduce((a, b) => (Number(b.dur_ns) > Number(a.dur_ns) ? b : a));
  const start = addNs(r.origin_ns, best.start_ns);
  return {
    rank: best.rank,
    start_ns: start,
    end_ns: addNs(start, best.dur_ns),
    select: { kind: best.kind, rank: best.rank, id: best.id, name: best.name },
    dur_ns: Number(best.dur_ns),
    calls: hits.length
  };
}

/** An error as the user needs it: what went wrong and what to do. */
export function errorBox(e: unknown, t: (k: string) => string): HTMLElement {
  const msg = e instanceof Error ? e.message : String(e);
  const fix = e instanceof ApiError ? e.fix : null;
  return h(
    'div',
    { class: 'pi-error', role: 'alert' },
    h('div', { class: 'pi-error-title' }, t('ui.error')),
    h('div', { class: 'pi-error-message' }, msg),
    fix ? h('div', { class: 'pi-error-fix' }, `${t('ui.fix')}: ${fix}`) : null
  );
}
