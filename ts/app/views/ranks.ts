/**
 * Ranks side by side: per rank the mean step split into computing / communication not
 * overlapped / free, how far each is from the median, the rank x step heat map grouped by
 * parallel group (./ranks_heatmap.ts), the parallel groups with the rank each waits for, and the
 * slow ranks and slow links the robust statistics find (the hot rank is not always rank 0).
 */
import { h } from '../dom';
import { barOption, Chart } from '../widgets/chart';
import { fmtUs, isNum, num, txt } from '../widgets/format';
import { empty, errorBox, fill, section } from '../widgets/parts';
import { columnsFor, DataTable } from '../widgets/table';
import { heatmap } from './ranks_heatmap';
import { openRankInFull } from './ranks_open';
import type { AnalysisPayload } from '../api';
import type { View, ViewContext } from './types';

const PARTS = ['computing_us', 'comm_not_overlapped_us', 'free_us'];
/** above this many ranks the bar chart shows the ranks farthest from the median (a bar per rank of
 * 1,024 would be a 28,000 px canvas); the heat map and the table keep every rank */
export const MAX_BARS = 64;
/** rows a ranks table shows before "show more": every figure of a row is formatted and laid out,
 * and 200 rows of 13 columns were a third of the view's first paint on 1,024 ranks */
const PAGE = 64;
type Row = Record<string, any>;

/** The ranks to draw as bars: all of them, or the MAX_BARS farthest from the median computing, in rank order. */
export function barRows(rows: Row[]): Row[] {
  if (rows.length <= MAX_BARS) {
    return rows;
  }
  const far = (r: Row) => Math.abs(isNum(r.computing_vs_median_us) ? r.computing_vs_median_us : 0);
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => far(b.r) - far(a.r) || a.i - b.i)
    .slice(0, MAX_BARS)
    .sort((a, b) => a.i - b.i)
    .map(x => x.r);
}

/** Whether a rank of this run opens on its own, in full: a run read from its ranks' summaries,
 * whose rank folders (or traces) are there -- not a cluster summary (msprof-analyze's output),
 * which holds no rank's traces. */
function opensInFull(ctx: ViewContext): boolean {
  return ctx.profile.tier === 'summary' && ctx.profile.format !== 'cluster' && typeof location !== 'undefined';
}

/** A button that opens rank `rank` on its own, in full (its timeline), where the run was loaded
 * from the ranks' summaries: the server serves the rank folder under a new id (imported in the
 * background already when it is one of the most suspicious ranks). */
function openRank(ctx: ViewContext, rank: number): Node | null {
  if (!opensInFull(ctx) || !Number.isFinite(rank)) {
    return null;
  }
  const b = h('button', { class: 'pi-open-rank', 'data-rank': rank, type: 'button' }, ctx.t('ui.ranks.open_rank', { rank }));
  b.addEventListener('click', () => {
    b.setAttribute('disabled', '');
    void openRankInFull(ctx, rank).catch(() => b.removeAttribute('disabled'));
  });
  return b;
}

/** at most this many findings are drawn as cards; the rest are named in one line (128 groups of a
 * 1,024-rank job each with its slow rank would be 2,500 elements to lay out) */
export const MAX_CARDS = 16;

function capped(t: ViewContext['t'], rows: Row[], rank: (r: Row) => string | number, card: (r: Row) => Node): Node[] {
  const out = rows.slice(0, MAX_CARDS).map(card);
  if (rows.length > MAX_CARDS) {
    const rest = rows.slice(MAX_CARDS).map(rank);
    out.push(h('p', { class: 'pi-note pi-ranks-more' }, t('ui.ranks.more', { n: rest.length, ranks: rest.join(', ') })));
  }
  return out;
}

/** Every row of an analysis, page by page (the server answers at most 5,000 rows a call: 1,024
 * ranks of 10 steps are 10,240 cells of the heat map). */
async function allRows(ctx: ViewContext, id: string, name: string): Promise<AnalysisPayload> {
  const first = await ctx.api.analysis(id, name, {}, { limit: 5000 });
  const rows = [...first.rows];
  const total = first.total_rows ?? rows.length;
  while (rows.length < total) {
    const next = await ctx.api.analysis(id, name, {}, { offset: rows.length, limit: 5000 });
    if (!next.rows.length) {
      break;
    }
    rows.push(...next.rows);
  }
  return { ...first, rows };
}

export function create(): View {
  const charts: { dispose(): void }[] = [];
  return {
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      void fill(
        el,
        t,
        async () => {
          const id = ctx.profile.id;
          const [sum, slow, links, grid, groups] = await Promise.all([
            ctx.api.analysis(id, 'rank_summary'),
            ctx.api.analysis(id, 'slow_ranks', { lang: ctx.lang }),
            ctx.api.analysis(id, 'slow_links', { lang: ctx.lang }),
            allRows(ctx, id, 'rank_steps'),
            ctx.api.analysis(id, 'parallel_groups', { lang: ctx.lang })
          ]);
          const out: Node[] = [];
          if (ctx.profile.ranks.length < 2) {
            out.push(h('p', { class: 'pi-note pi-ranks-single' }, t('ui.ranks.single')));
          }
          if (ctx.profile.tier) {
            out.push(h('p', { class: `pi-note pi-ranks-tier`, 'data-tier': ctx.profile.tier }, t(`ui.ranks.tier_${ctx.profile.tier}`)));
          }
          if (!sum.rows.length) {
            out.push(empty(t('ui.ranks.none')));
            return out;
          }
          const bars = barRows(sum.rows);
          const c = new Chart(Math.max(120, 50 + bars.length * 28));
          charts.push(c);
          c.set(
            barOption(
              bars.map(r => t('ui.ranks.rank', { rank: txt(r.rank) })),
              PARTS.map(k => ({ name: t(`ui.col.${k}`), values: bars.map(r => (isNum(r[k]) ? r[k] : null)) })),
              fmtUs,
              true
            )
          );
          out.push(
            section(
              t('ui.ranks.side_by_side'),
              h('p', { class: 'pi-note' }, t('ui.ranks.side_note')),
              bars.length < sum.rows.length ? h('p', { class: 'pi-note pi-ranks-top' }, t('ui.ranks.top_bars', { shown: bars.length, n: sum.rows.length })) : null,
              c.el,
              new DataTable({ t, columns: columnsFor(t, sum.columns, sum.rows, ['label']), rows: sum.rows, pageSize: PAGE }).el
            )
          );
          // a cell opens its rank: in full (a summary-tier run holds no timeline), else the step's
          // window; a cluster summary has neither
          const inFull = opensInFull(ctx);
          const cellPick = {
            hint: (r: Record<string, unknown>) =>
              inFull ? t('ui.ranks.click_full', { rank: txt(r.rank) }) : isNum(r.start_ns) ? t('ui.ranks.click_timeline') : null,
            go: (r: Record<string, unknown>) => {
              if (inFull) {
                void openRankInFull(ctx, Number(r.rank));
              } else if (isNum(r.start_ns) && isNum(r.end_ns)) {
                ctx.navigate('timeline', { rank: Number(r.rank), start_ns: r.start_ns, end_ns: r.end_ns, step: isNum(r.step) ? r.step : undefined });
              }
            }
          };
          out.push(section(t('ui.ranks.heatmap'), heatmap(t, grid.rows, charts, cellPick)));
          if (groups.rows.length) {
            out.push(
              section(
                t('ui.ranks.groups'),
                h('p', { class: 'pi-note' }, t('ui.ranks.groups_note')),
                capped(t, groups.rows.filter(r => r.slow_rank !== null && r.slow_rank !== undefined), r => txt(r.slow_rank), r =>
                    h(
                      'article',
                      { class: 'pi-finding pi-sev-medium pi-group-slow', 'data-rank': txt(r.slow_rank), 'data-group': txt(r.group) },
                      h('div', { class: 'pi-finding-head' }, h('span', { class: 'pi-finding-title' }, t('ui.ranks.group_slow', { rank: txt(r.slow_rank), names: String(r.names || '-'), ranks: String(r.ranks) })), openRank(ctx, Number(r.slow_rank))),
                      r.evidence ? h('div', { class: 'pi-note' }, String(r.evidence)) : null
                    )
                ),
                new DataTable({ t, columns: columnsFor(t, groups.columns, groups.rows, ['evidence', 'dimensions']), rows: groups.rows, pageSize: PAGE }).el
              )
            );
          }
          out.push(
            section(
              t('ui.ranks.slow_ranks'),
              slow.rows.length
                ? capped(t, slow.rows, r => txt(r.rank), r =>
                    h(
                      'article',
                      { class: 'pi-finding pi-sev-medium', 'data-rank': txt(r.rank) },
                      h('div', { class: 'pi-finding-head' }, h('span', { class: 'pi-finding-title' }, t('ui.ranks.slow_rank', { rank: txt(r.rank), component: t(`ui.col.${r.component}`) })), openRank(ctx, Number(r.rank))),
                      h('div', { class: 'pi-finding-message' }, t('ui.ranks.slow_detail', { value: fmtUs(num(r.value_us)), median: fmtUs(num(r.median_us)), dev: fmtUs(num(r.deviation_us)) })),
                      r.evidence ? h('div', { class: 'pi-note' }, String(r.evidence)) : null
                    )
                  )
                : empty(ctx.profile.ranks.length < 2 ? t('ui.ranks.slow_need_two') : t('ui.ranks.no_slow'))
            )
          );
          out.push(
            section(
              t('ui.ranks.slow_links'),
              links.rows.length
                ? new DataTable({ t, columns: columnsFor(t, links.columns, links.rows, ['label', 'evidence']), rows: links.rows }).el
                : empty(t('ui.communication.no_slow_links'))
            )
          );
          return out;
        },
        errorBox
      );
    },
    dispose() {
      charts.splice(0).forEach(c => c.dispose());
    }
  };
}
