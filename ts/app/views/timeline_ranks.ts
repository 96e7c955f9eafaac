/**
 * The Timeline view's rank panel (multi-rank profiles): which ranks are shown side by side, what
 * lines them up (a step start, or one collective matched on every rank: the offsets come from
 * the server, `timeline/align`), and each rank's offset, which the user can adjust for clock
 * skew.  Every profile string is set as text.
 */
import { append, clear, fmtDuration, h } from '../dom';
import type { AlignAnswer } from '../generated/wire';
import type { AlignSpec } from '../link';
import { alignText, parseAlign } from '../link';

type T = (key: string, vars?: Record<string, string | number>) => string;

/** Above this many ranks the panel picks ranks by a text of ranges (`0-3, 8`) instead of one
 * check box per rank, and the per-rank offsets are shown only for this many ranks or fewer. */
export const COMPACT_OVER = 8;

/** `ranks` (sorted, distinct) as ranges: [0,1,2,3,8] -> "0-3, 8". */
export function rankRanges(ranks: number[]): string {
  const out: string[] = [];
  const sorted = [...new Set(ranks)].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) {
      j++;
    }
    out.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j;
  }
  return out.join(', ');
}

/**
 * The ranks a text of ranges names (`0-3, 8`, `12`; spaces, commas or semicolons between parts),
 * kept to the `known` ones; `error` names what cannot be read or names no known rank.
 */
export function parseRanks(text: string, known: number[]): { ranks: number[] } | { error: string } {
  const have = new Set(known);
  const out = new Set<number>();
  const parts = text.split(/[\s,;]+/).filter(x => x);
  if (!parts.length) {
    return { error: text };
  }
  for (const part of parts) {
    const m = part.match(/^(\d+)(?:-(\d+))?$/);
    if (!m) {
      return { error: part };
    }
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let r = Math.min(a, b); r <= Math.max(a, b) && r - Math.min(a, b) <= 100_000; r++) {
      if (have.has(r)) {
        out.add(r);
      }
    }
  }
  return out.size ? { ranks: [...out].sort((x, y) => x - y) } : { error: text };
}

export interface RankPanelState {
  ranks: number[];
  shown: Set<number>;
  align: AlignSpec | null;
  answer: AlignAnswer | null;
  /** steps every rank recorded (the step choices) */
  steps: number[];
  /** total offset per rank, ns (alignment + the user's adjustment) */
  offsets: Map<number, number>;
  error: string | null;
}

export interface RankPanelActions {
  setShown(shown: Set<number>): void;
  setAlign(spec: AlignSpec | null): void;
  /** the user typed rank `rank`'s total offset (ns) */
  setOffset(rank: number, ns: number): void;
}

/** The compact picker of a run of many ranks: the ranks shown as ranges, typed. */
function rangePicker(st: RankPanelState, t: T, act: RankPanelActions): HTMLElement {
  const input = h('input', {
    type: 'text',
    class: 'pi-tl-ranks-pick',
    'aria-label': t('ui.timeline.ranks.shown'),
    placeholder: t('ui.timeline.ranks.pick_hint'),
    title: t('ui.timeline.ranks.pick_hint')
  }) as HTMLInputElement;
  input.value = rankRanges([...st.shown]);
  const count = h('span', { class: 'pi-tl-sub pi-tl-ranks-count' }, t('ui.timeline.ranks.count', { n: st.shown.size, total: st.ranks.length }));
  const error = h('span', { class: 'pi-tl-sub pi-error-message pi-tl-ranks-error', hidden: true });
  let applied = false;
  const apply = () => {
    if (applied) {
      return; // the panel is being drawn again (the field's own change event when it goes)
    }
    const r = parseRanks(input.value, st.ranks);
    if ('error' in r) {
      error.hidden = false;
      error.textContent = t('ui.timeline.ranks.pick_error', { text: r.error, ranks: rankRanges(st.ranks) });
      return;
    }
    error.hidden = true;
    applied = true;
    setTimeout(() => act.setShown(new Set(r.ranks))); // not while the field handles its event
  };
  input.addEventListener('change', apply);
  input.addEventListener('keydown', e => {
    if (e.key === 'Enter') {
      e.preventDefault();
      apply();
    }
  });
  return h(
    'div',
    { class: 'pi-tl-ranks-list pi-tl-ranks-compact' },
    input,
    count,
    h('button', { class: 'pi-tl-btn pi-tl-ranks-all', onclick: () => act.setShown(new Set(st.ranks)) }, t('ui.timeline.ranks.all')),
    error
  );
}

/** Draws the panel into `el` (replacing what was there). */
export function renderRankPanel(el: HTMLElement, st: RankPanelState, t: T, act: RankPanelActions): void {
  clear(el);
  const boxes = st.ranks.length > COMPACT_OVER ? rangePicker(st, t, act) : h('div', { class: 'pi-tl-ranks-list' });
  for (const r of st.ranks.length > COMPACT_OVER ? [] : st.ranks) {
    const box = h('input', { type: 'checkbox', class: 'pi-tl-rank-box', 'data-rank': String(r) }) as HTMLInputElement;
    box.checked = st.shown.has(r);
    box.addEventListener('change', () => {
      const next = new Set(st.shown);
      if (box.checked) {
        next.add(r);
      } else {
        next.delete(r);
      }
      if (next.size) {
        act.setShown(next);
      } else {
        box.checked = true; // at least one rank stays
      }
    });
    boxes.appendChild(h('label', { class: 'pi-tl-rank-label' }, box, ` ${t('ui.timeline.rank', { rank: r })}`));
  }
  if (st.ranks.length <= COMPACT_OVER) {
    boxes.appendChild(h('button', { class: 'pi-tl-btn pi-tl-ranks-all', onclick: () => act.setShown(new Set(st.ranks)) }, t('ui.timeline.ranks.all')));
  }

  const select = h('select', { class: 'pi-tl-align', 'aria-label': t('ui.timeline.ranks.align') }) as HTMLSelectElement;
  const option = (value: string, label: string) => {
    const o = h('option', { value }, label) as HTMLOptionElement;
    select.appendChild(o);
    return o;
  };
  option('', t('ui.timeline.ranks.none'));
  for (const s of st.steps) {
    option(`step:${s}`, t('ui.timeline.ranks.step', { step: s }));
  }
  if (st.align && st.align.by === 'collective') {
    const a = st.align;
    const name = st.answer?.name ?? `${a.kind} #${a.id}`;
    option(alignText({ ...a, edge: 'start' }), t('ui.timeline.ranks.coll_start', { name }));
    option(alignText({ ...a, edge: 'end' }), t('ui.timeline.ranks.coll_end', { name }));
  } else if (st.align && st.align.by === 'step' && !st.steps.includes(st.align.step)) {
    option(alignText(st.align), t('ui.timeline.ranks.step', { step: st.align.step }));
  }
  select.value = st.align ? alignText(st.align) : '';
  select.addEventListener('change', () => act.setAlign(parseAlign(select.value) ?? null));

  const offsets = h('div', { class: 'pi-tl-offsets', title: t('ui.timeline.ranks.offsets') });
  if (st.shown.size > COMPACT_OVER) {
    // one field per rank of a large run would fill the screen: adjust a few ranks at a time
    offsets.appendChild(h('span', { class: 'pi-tl-sub pi-tl-offsets-note' }, t('ui.timeline.ranks.offsets_few', { n: COMPACT_OVER })));
  }
  for (const r of st.shown.size > COMPACT_OVER ? [] : st.ranks) {
    if (!st.shown.has(r)) {
      continue;
    }
    const ns = st.offsets.get(r) ?? 0;
    const input = h('input', {
      type: 'number',
      step: '0.001',
      class: 'pi-tl-offset',
      'data-rank': String(r),
      'aria-label': t('ui.timeline.ranks.offset', { rank: r }),
      title: t('ui.timeline.ranks.offset', { rank: r })
    }) as HTMLInputElement;
    input.value = (ns / 1000).toFixed(3);
    input.addEventListener('change', () => {
      const us = Number(input.value);
      if (Number.isFinite(us)) {
        act.setOffset(r, Math.round(us * 1000));
      }
    });
    offsets.appendChild(h('label', { class: 'pi-tl-offset-label' }, `R${r} `, input));
  }

  const status = h('div', { class: 'pi-tl-sub pi-tl-align-status' });
  if (st.error) {
    status.classList.add('pi-error-message');
    status.textContent = st.error;
  } else if (st.answer) {
    const a = st.answer;
    const parts = [t('ui.timeline.ranks.aligned', { name: a.name ?? '', ref: a.reference })];
    const shown = a.ranks.filter(r => st.shown.has(r.rank) && r.rank !== a.reference);
    parts.push(...shown.map(r => `R${r.rank} ${r.offset_ns >= 0 ? '+' : '−'}${fmtDuration(Math.abs(r.offset_ns))}`));
    const missing = a.missing.filter(r => st.shown.has(r));
    if (missing.length) {
      parts.push(t('ui.timeline.ranks.missing', { ranks: missing.join(', ') }));
    }
    status.textContent = parts.join(' · ');
  }
  append(el, [
    h('div', { class: 'pi-tl-ranks-row' }, h('span', { class: 'pi-tl-sub' }, t('ui.timeline.ranks.shown')), boxes),
    h('div', { class: 'pi-tl-ranks-row' }, h('span', { class: 'pi-tl-sub' }, t('ui.timeline.ranks.align')), select, offsets),
    status
  ]);
}
