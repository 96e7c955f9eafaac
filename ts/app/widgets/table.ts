/**
 * A sortable, filterable data table.  Rows are rendered in pages ("show more") so a table of tens
 * of thousands of operators never builds tens of thousands of DOM rows at once; every cell is
 * text (textContent), so profile strings cannot inject markup.
 */
import { append, clear, fmtNumber, h } from '../dom';
import { colLabel, fmtCell, Translate, tr, unitOf } from './format';

export interface Column {
  key: string;
  /** header text (default: the catalogue label of `key`) */
  label?: string;
  /** cell text (default: by the column name's unit) */
  format?: (value: any, row: Record<string, any>) => string;
  /** the value sorted on (default: `row[key]`) */
  value?: (row: Record<string, any>) => any;
  /** right-aligned, sorted descending on first click */
  numeric?: boolean;
  title?: string;
}

export interface TableOptions {
  t: Translate;
  columns: Column[];
  rows: Record<string, any>[];
  /** show the filter box */
  filter?: boolean;
  /** rows per page (default 200) */
  pageSize?: number;
  onSelect?: (row: Record<string, any>) => void;
  /** extra class on the wrapper */
  className?: string;
  /** initial sort */
  sort?: { key: string; desc: boolean } | null;
}

/** Columns of an analysis result: units from the names, numeric when the values are. */
export function columnsFor(t: Translate, names: string[], rows: Record<string, any>[], hide: string[] = []): Column[] {
  return names
    .filter(c => !hide.includes(c))
    // a column with no value anywhere (a GPU trace has no HCCS bandwidth) only takes room
    .filter(c => !rows.length || rows.some(r => r[c] !== null && r[c] !== undefined && r[c] !== ''))
    .map(c => {
      const sample = rows.find(r => r[c] !== null && r[c] !== undefined);
      const numeric = sample ? typeof sample[c] === 'number' && unitOf(c) !== 'ns' : false;
      return { key: c, label: colLabel(t, c), numeric, title: c };
    });
}

export class DataTable {
  readonly el: HTMLElement;
  private rows: Record<string, any>[] = [];
  private view: Record<string, any>[] = [];
  private shown = 0;
  private query = '';
  private sort: { key: string; desc: boolean } | null;
  private selected: Record<string, any> | null = null;
  private readonly tbody: HTMLTableSectionElement;
  private readonly thead: HTMLTableSectionElement;
  private readonly footer: HTMLElement;
  private readonly count: HTMLElement;
  private readonly page: number;

  constructor(private readonly opts: TableOptions) {
    this.page = opts.pageSize ?? 200;
    this.sort = opts.sort ?? null;
    this.thead = h('thead');
    this.tbody = h('tbody');
    this.footer = h('div', { class: 'pi-table-footer' });
    this.count = h('span', { class: 'pi-table-count' });
    const tools = h('div', { class: 'pi-table-tools' });
    if (opts.filter) {
      const input = h('input', {
        type: 'search',
        class: 'pi-table-filter',
        placeholder: tr(opts.t, 'ui.table.filter', 'Filter'),
        'aria-label': tr(opts.t, 'ui.table.filter', 'Filter')
      });
      input.addEventListener('input', () => {
        this.query = input.value.trim().toLowerCase();
        this.refresh();
      });
      tools.appendChild(input);
    }
    tools.appendChild(this.count);
    this.el = h(
      'div',
      { class: `pi-table-wrap ${opts.className || ''}` },
      tools,
      h('div', { class: 'pi-table-scroll' }, h('table', { class: 'pi-table' }, this.thead, this.tbody)),
      this.footer
    );
    this.setRows(opts.rows);
  }

  setRows(rows: Record<string, any>[]): void {
    this.rows = rows;
    this.selected = null;
    this.refresh();
  }

  /** The rows as currently filtered and sorted (what the user sees, all pages). */
  visibleRows(): Record<string, any>[] {
    return this.view;
  }

  private refresh(): void {
    const q = this.query;
    let view = this.rows;
    if (q) {
      view = view.filter(r =>
        this.opts.columns.some(c => {
          const v = r[c.key];
          return typeof v === 'string' && v.toLowerCase().includes(q);
        })
      );
    }
    if (this.sort) {
      const col = this.opts.columns.find(c => c.key === this.sort!.key);
      const get = col?.value || ((r: Record<string, any>) => r[this.sort!.key]);
      const dir = this.sort.desc ? -1 : 1;
      view = view
        .map((r, i) => ({ r, i, v: get(r) }))
        .sort((a, b) => {
          const an = a.v === null || a.v === undefined || (typeof a.v === 'number' && isNaN(a.v));
          const bn = b.v === null || b.v === undefined || (typeof b.v === 'number' && isNaN(b.v));
          if (an || bn) {
            return an && bn ? a.i - b.i : an ? 1 : -1; // empty cells last either way
          }
          const c = typeof a.v === 'number' && typeof b.v === 'number' ? a.v - b.v : String(a.v).localeCompare(String(b.v));
          return c === 0 ? a.i - b.i : c * dir;
        })
        .map(x => x.r);
    }
    this.view = view;
    this.shown = Math.min(this.page, view.length);
    this.renderHead();
    this.renderBody();
  }

  private renderHead(): void {
    clear(this.thead);
    const tr_ = h('tr');
    for (const c of this.opts.columns) {
      const active = this.sort && this.sort.key === c.key;
      const th = h(
        'th',
        {
          class: `${c.numeric ? 'pi-num' : ''} ${active ? 'pi-sorted' : ''}`,
          'data-key': c.key,
          title: c.title || c.key,
          'aria-sort': active ? (this.sort!.desc ? 'descending' : 'ascending') : 'none',
          tabindex: 0
        },
        c.label ?? colLabel(this.opts.t, c.key),
        active ? h('span', { class: 'pi-sort-mark' }, this.sort!.desc ? ' ▼' : ' ▲') : null
      );
      const toggle = () => {
        if (this.sort && this.sort.key === c.key) {
          this.sort = { key: c.key, desc: !this.sort.desc };
        } else {
          this.sort = { key: c.key, desc: !!c.numeric };
        }
        this.refresh();
      };
      th.addEventListener('click', toggle);
      th.addEventListener('keydown', e => {
        if ((e as KeyboardEvent).key === 'Enter') {
          toggle();
        }
      });
      tr_.appendChild(th);
    }
    this.thead.appendChild(tr_);
  }

  private renderBody(): void {
    clear(this.tbody);
    this.appendRows(0, this.shown);
    this.renderFooter();
  }

  private appendRows(from: number, to: number): void {
    const frag = document.createDocumentFragment();
    for (let i = from; i < to; i++) {
      const row = this.view[i];
      const tr_ = h('tr', { 'data-index': i });
      if (row === this.selected) {
        tr_.classList.add('pi-selected');
      }
      for (const c of this.opts.columns) {
        const v = row[c.key];
        const text = c.format ? c.format(v, row) : fmtCell(c.key, v);
        tr_.appendChild(h('td', { class: c.numeric ? 'pi-num' : '', title: text.length > 40 ? text : null }, text));
      }
      if (this.opts.onSelect) {
        tr_.classList.add('pi-clickable');
        tr_.addEventListener('click', () => {
          this.selected = row;
          for (const el of Array.from(this.tbody.querySelectorAll('tr.pi-selected'))) {
            el.classList.remove('pi-selected');
          }
          tr_.classList.add('pi-selected');
          this.opts.onSelect!(row);
        });
      }
      frag.appendChild(tr_);
    }
    this.tbody.appendChild(frag);
  }

  private renderFooter(): void {
    const t = this.opts.t;
    const total = this.view.length;
    this.count.textContent =
      total === this.rows.length
        ? tr(t, 'ui.table.rows', `${fmtNumber(total)} rows`, { n: fmtNumber(total) })
        : tr(t, 'ui.table.rows_of', `${fmtNumber(total)} of ${fmtNumber(this.rows.length)} rows`, {
            n: fmtNumber(total),
            total: fmtNumber(this.rows.length)
          });
    clear(this.footer);
    if (!total) {
      this.footer.appendChild(h('div', { class: 'pi-empty pi-table-none' }, tr(t, 'ui.table.no_match', 'No rows match.')));
    } else if (this.shown < total) {
      const rest = total - this.shown;
      const more = h(
        'button',
        { class: 'pi-more' },
        tr(t, 'ui.table.more', `Show ${Math.min(rest, this.page)} more (${rest} left)`, {
          n: fmtNumber(Math.min(rest, this.page)),
          left: fmtNumber(rest)
        })
      );
      more.addEventListener('click', () => {
        const from = this.shown;
        this.shown = Math.min(total, this.shown + this.page);
        this.appendRows(from, this.shown);
        this.renderFooter();
      });
      append(this.footer, [more]);
    }
  }
}
