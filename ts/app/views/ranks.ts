/**
 * Ranks side by side: per rank the mean step split into computing / communication not
 * overlapped / free, how far each is from the median, and the slow ranks and slow links the
 * robust statistics find (the hot rank is not always rank 0).
 */
import { h } from '../dom';
import { barOption, Chart } from '../widgets/chart';
import { fmtUs, isNum, num, txt } from '../widgets/format';
import { empty, errorBox, fill, section } from '../widgets/parts';
import { columnsFor, DataTable } from '../widgets/table';
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
          const [sum, slow, links] = await Promise.all([
            ctx.api.analysis(id, 'rank_summary'),
            ctx.api.analysis(id, 'slow_ranks'),
            ctx.api.analysis(id, 'slow_links')
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
