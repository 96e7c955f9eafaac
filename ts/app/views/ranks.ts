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
import type { View, ViewContext } from './types';

const PARTS = ['computing_us', 'comm_not_overlapped_us', 'free_us'];

export function create(): View {
  const charts: Chart[] = [];
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
            ctx.api.analysis(id, 'slow_ranks'),
            ctx.api.analysis(id, 'slow_links'),
            ctx.api.analysis(id, 'rank_steps', {}, { limit: 5000 }),
            ctx.api.analysis(id, 'parallel_groups')
          ]);
          const out: Node[] = [];
          if (ctx.profile.ranks.length < 2) {
            out.push(h('p', { class: 'pi-note pi-ranks-single' }, t('ui.ranks.single')));
          }
          if (!sum.rows.length) {
            out.push(empty(t('ui.ranks.none')));
            return out;
          }
          const c = new Chart(Math.max(120, 50 + sum.rows.length * 28));
          charts.push(c);
          c.set(
            barOption(
              sum.rows.map(r => t('ui.ranks.rank', { rank: txt(r.rank) })),
              PARTS.map(k => ({ name: t(`ui.col.${k}`), values: sum.rows.map(r => (isNum(r[k]) ? r[k] : null)) })),
              fmtUs,
              true
            )
          );
          out.push(
            section(
              t('ui.ranks.side_by_side'),
              h('p', { class: 'pi-note' }, t('ui.ranks.side_note')),
              c.el,
              new DataTable({ t, columns: columnsFor(t, sum.columns, sum.rows, ['label']), rows: sum.rows }).el
            )
          );
          out.push(section(t('ui.ranks.heatmap'), heatmap(t, grid.rows, charts)));
          if (groups.rows.length) {
            out.push(
              section(
                t('ui.ranks.groups'),
                h('p', { class: 'pi-note' }, t('ui.ranks.groups_note')),
                groups.rows
                  .filter(r => r.slow_rank !== null && r.slow_rank !== undefined)
                  .map(r =>
                    h(
                      'article',
                      { class: 'pi-finding pi-sev-medium pi-group-slow', 'data-rank': txt(r.slow_rank), 'data-group': txt(r.group) },
                      h('div', { class: 'pi-finding-head' }, h('span', { class: 'pi-finding-title' }, t('ui.ranks.group_slow', { rank: txt(r.slow_rank), names: String(r.names || '-'), ranks: String(r.ranks) }))),
                      r.evidence ? h('div', { class: 'pi-note' }, String(r.evidence)) : null
                    )
                  ),
                new DataTable({ t, columns: columnsFor(t, groups.columns, groups.rows, ['evidence', 'dimensions']), rows: groups.rows }).el
              )
            );
          }
          out.push(
            section(
              t('ui.ranks.slow_ranks'),
              slow.rows.length
                ? slow.rows.map(r =>
                    h(
                      'article',
                      { class: 'pi-finding pi-sev-medium', 'data-rank': txt(r.rank) },
                      h('div', { class: 'pi-finding-head' }, h('span', { class: 'pi-finding-title' }, t('ui.ranks.slow_rank', { rank: txt(r.rank), component: t(`ui.col.${r.component}`) }))),
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
