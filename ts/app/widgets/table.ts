/**
 * The one table widget of the viewer (and of notebook outputs): sortable (click a header),
 * filterable (a filter box over every text and number cell), copyable (the rows shown, as
 * tab-separated text a spreadsheet takes) and exportable to CSV (the filtered rows in their
 * order, every field with its raw value: microseconds stay microseconds, epoch nanoseconds keep
 * every digit).  Rows are rendered in pages ("show more") so a table of tens of thousands of
 * operators never builds tens of thousands of DOM rows at once; every cell is text
 * (textContent), so profile strings cannot inject markup.
 */
import { append, clear, fmtNumber, h } from '../dom';
import type { AnalysisPayload } from '../generated/wire';
import { colLabel, fmtCell, termText, TERMS, Translate, tr, unitOf } from './format';

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
  /** the cell as a node (a button, code) instead of text; copy and CSV still take `format`'s text */
  node?: (row: Record<string, any>) => Node;
  /** extra attributes of the cell (data-* for page scripts) */
  attrs?: (row: Record<string, any>) => Record<string, string | number>;
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
  /** initial filter text (as typed) */
  query?: string;
  /** the user changed the filter text or the sort: what a view keeps in the page address */
  onView?: (v: { query: string; sort: { key: string; desc: boolean } | null }) => void;
  /** the CSV file's name without extension (default `table`) */
  name?: string;
  /** the fields the CSV holds (default: every field of the rows, in their order) */
  exportKeys?: string[];
  /** extra attributes of a row's <tr> (a class, data-* for page scripts) */
  rowAttrs?: (row: Record<string, any>) => Record<string, string>;
  /** exact decimal text of integer columns beyond 2^53, aligned with `rows` (the payload's `exact`) */
  exact?: Record<string, (string | null)[]>;
}

/** One CSV field: quoted when it holds a separator, a quote or a line break. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v))) {
    return '';
  }
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** `rows` as CSV text (RFC 4180, CRLF line ends) with `keys` as the header. */
export function toCsv(keys: string[], rows: Record<string, any>[]): string {
  const lines = [keys.map(csvField).join(',')];
  for (const r of rows) {
    lines.push(keys.map(k => csvField(r[k])).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}

/** Text to the clipboard; where the page may not use the clipboard API (plain http), the old way. */
export async function copyText(text: string): Promise<void> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
  } catch {
    /* fall through to the old way */
  }
  const area = h('textarea', { style: 'position:fixed;left:-9999px;top:0', readonly: true });
  area.value = text;
  document.body.appendChild(area);
  area.select();
  try {
    document.execCommand('copy');
  } finally {
    area.remove();
  }
}

/** Offers `text` as a file download named `file`. */
export function download(file: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob(['\ufeff' + text], { type }));
  const a = h('a', { href: url, download: file, style: 'display:none' });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
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

/**
 * The table of an analysis payload: its columns (less `hide`), its rows, their exact big
 * integers, the analysis's name for the CSV file; `more` adds or overrides options.
 */
export function payloadTable(t: Translate, p: AnalysisPayload, hide: string[] = ['label'], more: Partial<TableOptions> = {}): DataTable {
  return new DataTable({
    t,
    columns: columnsFor(t, p.columns, p.rows, hide),
    rows: p.rows,
    exact: p.exact,
    name: p.analysis || 'table',
    exportKeys: p.columns,
    ...more
  });
}

export class DataTable {
  readonly el: HTMLElement;
  private rows: Record<string, any>[] = [];
  private view: Record<string, any>[] = [];
  private shown = 0;
  private query = '';
  /** the filter as typed (trimmed), for onView */
  private queryText = '';
  private sort: { key: string; desc: boolean } | null;
  private selected: Record<string, any> | null = null;
  private readonly tbody: HTMLTableSectionElement;
  private readonly thead: HTMLTableSectionElement;
  private readonly footer: HTMLElement;
  private readonly count: HTMLElement;
  private readonly page: number;
  /** row -> exact text of its big-integer fields (see TableOptions.exact) */
  private exact = new Map<Record<string, any>, Record<string, string>>();

  constructor(private readonly opts: TableOptions) {
    this.page = opts.pageSize ?? 200;
    this.sort = opts.sort ?? null;
    this.thead = h('thead');
    this.tbody = h('tbody');
    this.footer = h('div', { class: 'pi-table-footer' });
    this.count = h('span', { class: 'pi-table-count' });
    const tools = h('div', { class: 'pi-table-tools' });
    if (opts.filter !== false) {
      const input = h('input', {
        type: 'search',
        class: 'pi-table-filter',
        placeholder: tr(opts.t, 'ui.table.filter', 'Filter'),
        'aria-label': tr(opts.t, 'ui.table.filter', 'Filter')
      });
      input.value = opts.query ?? '';
      this.queryText = input.value.trim();
      this.query = this.queryText.toLowerCase();
      input.addEventListener('input', () => {
        this.queryText = input.value.trim();
        this.query = this.queryText.toLowerCase();
        this.refresh();
        opts.onView?.({ query: this.queryText, sort: this.sort });
      });
      tools.appendChild(input);
    }
    tools.appendChild(this.count);
    const t = opts.t;
    const copied = h('span', { class: 'pi-table-copied', 'aria-live': 'polite' });
    const copy = h('button', { class: 'pi-table-copy', title: tr(t, 'ui.table.copy_hint', 'Copy the rows shown (filtered, in this order) as tab-separated text') }, tr(t, 'ui.table.copy', 'Copy'));
    copy.addEventListener('click', () => {
      void copyText(this.tsv()).then(() => {
        copied.textContent = tr(t, 'ui.table.copied', 'Copied {n} rows', { n: fmtNumber(this.view.length) });
        setTimeout(() => (copied.textContent = ''), 2500);
      });
    });
    const csv = h('button', { class: 'pi-table-csv', title: tr(t, 'ui.table.csv_hint', 'Download the rows shown as CSV, with raw values') }, 'CSV');
    csv.addEventListener('click', () => download(`${opts.name || 'table'}.csv`, this.csv()));
    append(tools, [h('span', { class: 'pi-spacer' }), copied, copy, csv]);
    this.el = h(
      'div',
      { class: `pi-table-wrap ${opts.className || ''}` },
      tools,
      h('div', { class: 'pi-table-scroll' }, h('table', { class: 'pi-table' }, this.thead, this.tbody)),
      this.footer
    );
    this.setRows(opts.rows);
  }

  setRows(rows: Record<string, any>[], exact: Record<string, (string | null)[]> | undefined = this.opts.exact): void {
    this.rows = rows;
    this.exact = new Map();
    for (const [col, values] of Object.entries(exact || {})) {
      rows.forEach((r, i) => {
        const v = values[i];
        if (v !== null && v !== undefined) {
          const e = this.exact.get(r) || {};
          e[col] = v;
          this.exact.set(r, e);
        }
      });
    }
    this.selected = null;
    this.refresh();
  }

  /** A field's raw value, exact where the payload sent it as text. */
  private raw(row: Record<string, any>, key: string): any {
    const e = this.exact.get(row);
    return e && key in e ? e[key] : row[key];
  }

  /** The CSV of the rows shown (all pages), every field with its raw value. */
  csv(): string {
    const keys = this.opts.exportKeys || this.allKeys();
    return toCsv(keys, this.view.map(r => Object.fromEntries(keys.map(k => [k, this.raw(r, k)]))));
  }

  /** The rows shown as the table shows them (headers and formatted cells), tab-separated. */
  tsv(): string {
    const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
    const cols = this.opts.columns;
    const lines = [cols.map(c => clean(c.label ?? colLabel(this.opts.t, c.key))).join('\t')];
    for (const r of this.view) {
      lines.push(cols.map(c => clean(this.cellText(c, r))).join('\t'));
    }
    return lines.join('\n') + '\n';
  }

  private allKeys(): string[] {
    const keys: string[] = [];
    const seen = new Set<string>();
    for (const r of this.rows) {
      for (const k of Object.keys(r)) {
        if (!seen.has(k)) {
          seen.add(k);
          keys.push(k);
        }
      }
    }
    return keys;
  }

  private cellText(c: Column, row: Record<string, any>): string {
    const v = this.raw(row, c.key);
    return c.format ? c.format(row[c.key], row) : fmtCell(c.key, v);
  }

  /** The rows as currently filtered and sorted (what the user sees, all pages). */
  visibleRows(): Record<string, any>[] {
    return this.view;
  }

  private refresh(): void {
    const q = this.query;
    let view = this.rows;
    if (q) {
      // text cells by their content, number cells by what the table shows ("1.5 ms", "12%")
      view = view.filter(r =>
        this.opts.columns.some(c => {
          const v = r[c.key];
          if (typeof v === 'string') {
            return v.toLowerCase().includes(q);
          }
          return typeof v === 'number' && this.cellText(c, r).toLowerCase().includes(q);
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
      // a headline figure's header explains itself: the glossary's definition on hover
      const term = TERMS[c.key];
      const def = termText(this.opts.t, term);
      const th = h(
        'th',
        {
          class: `${c.numeric ? 'pi-num' : ''} ${active ? 'pi-sorted' : ''} ${def ? 'pi-term' : ''}`,
          'data-key': c.key,
          'data-term': def ? term : null,
          title: def ? `${def}\n(${c.title || c.key})` : c.title || c.key,
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
        this.opts.onView?.({ query: this.queryText, sort: this.sort });
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
      const attrs = this.opts.rowAttrs ? this.opts.rowAttrs(row) : {};
      const tr_ = h('tr', { ...attrs, 'data-index': i });
      if (row === this.selected) {
        tr_.classList.add('pi-selected');
      }
      for (const c of this.opts.columns) {
        const text = this.cellText(c, row);
        const extra = c.attrs ? c.attrs(row) : {};
        tr_.appendChild(h('td', { ...extra, class: c.numeric ? 'pi-num' : '', title: text.length > 40 ? text : null }, c.node ? c.node(row) : text));
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
