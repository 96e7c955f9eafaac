/**
 * The Ranks view's rank x step heat map: one cell per rank and step, coloured by the chosen
 * figure (step time, computing, communication wait), the ranks ordered and labelled by their
 * parallel group (the `rank_steps` analysis), so a slow rank is the odd cell of its group's
 * block.  Below it the same numbers as a table (readable, selectable, testable).  Where the
 * figures are the vendor's per-rank summaries rather than the rank's own tasks, the cell's
 * tooltip and the table say so.
 */
import { clear, h } from '../dom';
import { fmtUs, isNum, txt } from '../widgets/format';
import { HeatGrid, type Cell } from '../widgets/heatgrid';
import { empty } from '../widgets/parts';
import type { Translate } from '../widgets/format';

export const METRICS = ['step_us', 'computing_us', 'comm_wait_us'] as const;
type Row = Record<string, unknown>;

/** The ranks in drawing order (group, then rank) with the group label shown at a group's first rank. */
export function rankOrder(rows: Row[]): { ranks: number[]; group: Map<number, string> } {
  const group = new Map<number, string>();
  const order = new Map<number, number>();
  for (const r of rows) {
    const rank = Number(r.rank);
    group.set(rank, String(r.group ?? ''));
    order.set(rank, Number(r.group_order ?? 0));
  }
  const ranks = Array.from(order.keys()).sort((a, b) => (order.get(a)! - order.get(b)!) || a - b);
  return { ranks, group };
}

/** What a click on a cell opens: `hint` says it in the tooltip (null: nothing), `go` opens it. */
export interface CellPick {
  hint: (row: Row) => string | null;
  go: (row: Row) => void;
}

export function heatmap(t: Translate, rows: Row[], charts: { dispose(): void }[], pick?: CellPick): HTMLElement {
  if (!rows.length) {
    return empty(t('ui.ranks.none'));
  }
  const { ranks, group } = rankOrder(rows);
  const stepOf = (r: Row) => (r.step === null || r.step === undefined ? '-' : String(r.step));
  const steps = Array.from(new Set(rows.map(stepOf)));
  const stepIx = new Map(steps.map((s, i) => [s, i]));
  const rankIx = new Map(ranks.map((r, i) => [r, i]));
  const picker = h('select', { class: 'pi-heat-metric', 'aria-label': t('ui.ranks.metric') });
  for (const m of METRICS) {
    picker.appendChild(h('option', { value: m }, t(`ui.col.${m}`)));
  }
  const many = ranks.length > 64;
  // one canvas, one rectangle per cell (./widgets/heatgrid.ts): at 1,024 ranks a chart element per
  // cell cost 130-240 ms of the view's paint.  Rows of 24 px up to 64 ranks, then thinner down to
  // one pixel row per rank (1,024 ranks in a 1,074 px map, every rank a line of its group's block);
  // the wheel zooms into a band of ranks
  const rowPx = many ? Math.max(1, Math.min(24, Math.floor(640 / ranks.length))) : 24;
  const chart = new HeatGrid(Math.min(1100, 50 + ranks.length * rowPx), 'pi-heat-chart');
  charts.push(chart);
  const grid = h('div', { class: 'pi-heat-table' });
  // the group's label at its first rank (a block of the map)
  const blocks = ranks.map((rank, i) => {
    const g = group.get(rank) ?? '';
    return g && (i === 0 || (group.get(ranks[i - 1]) ?? '') !== g) ? g : null;
  });
  const labels = ranks.map((rank, i) => (blocks[i] ? `${blocks[i]}  ${t('ui.ranks.rank', { rank })}` : t('ui.ranks.rank', { rank })));
  // each row of rank_steps at its cell (column: step, row: rank), found back by the cell
  const placed = rows.map(r => ({ col: stepIx.get(stepOf(r)) ?? 0, row: rankIx.get(Number(r.rank)) ?? 0, r }));
  const byCell = new Map(placed.map(p => [`${p.col}|${p.row}`, p.r]));
  const rowAt = (c: Cell) => byCell.get(`${c[0]}|${c[1]}`);
  const draw = () => {
    const metric = picker.value;
    const cells: Cell[] = placed.map(p => [p.col, p.row, isNum(p.r[metric]) ? (p.r[metric] as number) : null]);
    chart.set(
      {
        columns: steps,
        rows: labels,
        blocks,
        columnName: t('ui.ranks.steps'),
        fmt: fmtUs,
        tip: c => {
          const r = rowAt(c);
          return [
            `${t('ui.ranks.rank', { rank: ranks[c[1]] })} · ${t('ui.ranks.step', { step: steps[c[0]] })}`,
            `${t(`ui.col.${metric}`)} ${c[2] === null ? '-' : fmtUs(c[2])}`,
            group.get(ranks[c[1]]) ?? '',
            t('ui.ranks.tier', { source: String(r?.source ?? '') }),
            (pick && r && pick.hint(r)) || ''
          ].filter(Boolean);
        },
        pick: pick
          ? c => {
              const r = rowAt(c);
              if (r && pick.hint(r)) {
                pick.go(r);
              }
            }
          : undefined
      },
      cells
    );
    clear(grid);
    if (many) {
      return; // 1,024 ranks: the table would be the page; the chart and its tooltip carry the figures
    }
    const head = h('tr', {}, h('th', {}, t('ui.ranks.group')), h('th', {}, t('ui.ranks.rank_col')), steps.map(s => h('th', { class: 'pi-num' }, t('ui.ranks.step', { step: s }))));
    const body = ranks.map((rank, i) =>
      h(
        'tr',
        { 'data-rank': rank },
        h('td', {}, group.get(rank) ?? ''),
        h('th', {}, String(rank)),
        steps.map((s, j) => {
          const r = byCell.get(`${j}|${i}`);
          const v = r && isNum(r[metric]) ? fmtUs(r[metric] as number) : '';
          return h('td', { class: 'pi-num', 'data-step': s, 'data-source': r ? txt(r.source) : '', title: r ? t('ui.ranks.tier', { source: String(r.source ?? '') }) : '' }, v);
        })
      )
    );
    grid.appendChild(h('table', { class: 'pi-table pi-heat-grid' }, h('thead', {}, head), h('tbody', {}, body)));
  };
  picker.addEventListener('change', draw);
  const box = h(
    'div',
    { class: 'pi-heat' },
    h('div', { class: 'pi-controls' }, h('label', { class: 'pi-control' }, h('span', {}, t('ui.ranks.metric')), picker)),
    h('p', { class: 'pi-note' }, t('ui.ranks.heat_note'), ' ', t('ui.ranks.heat_zoom')),
    chart.el,
    grid
  );
  draw();
  return box;
}
