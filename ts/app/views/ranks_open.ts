/**
 * A run opened in the summary tier has no timeline, kernels or operators: its ranks were read from
 * their summaries (or a Kineto pre-pass).  The Timeline view of such a run shows this panel
 * instead: it says so and opens one rank in full -- the ones imported in the background first
 * (most suspicious first: the rank each parallel group waits for), then any rank by its id.  The
 * server serves the rank folder on its own (`api/profiles/ID/ranks/N`); its timeline opens.
 */
import { h } from '../dom';
import { buildHash } from '../link';
import type { View, ViewContext } from './types';

/** Opens rank `rank` of the profile in full, on its timeline (the standalone page follows the link). */
export async function openRankInFull(ctx: ViewContext, rank: number): Promise<void> {
  const a = await ctx.api.openRank(ctx.profile.id, rank);
  location.hash = buildHash(a.id, 'timeline');
}

export function summaryTimeline(): View {
  return {
    async mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      el.classList.add('pi-pane-timeline', 'pi-tl-summary');
      const ready = new Set<number>();
      let planned: number[] = [];
      try {
        const st = await ctx.api.status(ctx.profile.id);
        planned = st.background?.ranks ?? [];
        for (const r of st.background?.done ?? []) {
          ready.add(r);
        }
      } catch {
        planned = [];
      }
      const button = (rank: number) => {
        const b = h('button', { class: 'pi-open-rank', 'data-rank': rank, type: 'button' }, t('ui.ranks.open_rank', { rank }));
        b.addEventListener('click', () => {
          b.setAttribute('disabled', '');
          void openRankInFull(ctx, rank).catch(() => b.removeAttribute('disabled'));
        });
        return b;
      };
      const pick = h('select', { class: 'pi-open-rank-pick', 'aria-label': t('ui.ranks.rank_col') });
      for (const r of ctx.profile.ranks) {
        pick.appendChild(h('option', { value: String(r) }, t('ui.ranks.rank', { rank: r })));
      }
      const go = h('button', { class: 'pi-open-rank-go', type: 'button' }, t('ui.ranks.open'));
      go.addEventListener('click', () => {
        go.setAttribute('disabled', '');
        void openRankInFull(ctx, Number((pick as HTMLSelectElement).value)).catch(() => go.removeAttribute('disabled'));
      });
      el.appendChild(
        h(
          'section',
          { class: 'pi-section pi-tl-summary-panel' },
          h('p', { class: 'pi-note' }, t('ui.ranks.timeline_summary')),
          planned.length
            ? h(
                'div',
                { class: 'pi-controls pi-open-suspicious' },
                h('span', {}, t('ui.ranks.suspicious')),
                planned.map(r => {
                  const b = button(r);
                  if (ready.has(r)) {
                    b.setAttribute('data-ready', '');
                  }
                  return b;
                })
              )
            : null,
          h('div', { class: 'pi-controls' }, pick, go)
        )
      );
    }
  };
}
