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

/** Draws the panel into `el` (replacing what was there). */
export function renderRankPanel(el: HTMLElement, st: RankPanelState, t: T, act: RankPanelActions): void {
  clear(el);
  const boxes = h('div', { class: 'pi-tl-ranks-list' });
  for (const r of st.ranks) {
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
  boxes.appendChild(h('button', { class: 'pi-tl-btn pi-tl-ranks-all', onclick: () => act.setShown(new Set(st.ranks)) }, t('ui.timeline.ranks.all')));

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
  for (const r of st.ranks) {
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
