/**
 * A heat map of rows x columns drawn on one plain canvas: one `fillRect` per cell, no chart
 * library element per cell.  At 1,024 ranks the ECharts heat map cost 130-240 ms of the Ranks
 * view's repaint (a graphic element, hit box and style per cell, plus the library's start-up when
 * it was the first chart drawn); this draws the same cells in a few ms and redraws on hover,
 * zoom and theme changes without rebuilding anything.
 *
 * What the user can do: hover a cell for its figures (a tooltip beside the pointer), wheel over
 * the map to zoom into a band of rows around the pointer, drag to move that band, double-click
 * to see every row again, click a cell to open what it stands for (the caller's `pick`).  The band
 * shown is in `data-band` ("first-last", 0-based, inclusive), so tests and screenshots can say what
 * is on screen.
 */
import { cssVar, h } from '../dom';

/** One cell: column index, row index, value (null: no figure). */
export type Cell = [number, number, number | null];

export interface HeatGridOptions {
  /** Column labels (drawn along the top, thinned where they would overlap). */
  columns: string[];
  /** Row labels; drawn when a row is at least 11 px tall. */
  rows: string[];
  /** Labels drawn at the first row of each block (e.g. parallel groups) when rows are too thin for their own. */
  blocks?: (string | null)[];
  /** Axis name above the column labels. */
  columnName?: string;
  /** Formats a value for the legend. */
  fmt: (v: number) => string;
  /** The tooltip's lines for a cell. */
  tip: (cell: Cell) => string[];
  /** A click on a cell (not a drag, not the first click of a double-click). */
  pick?: (cell: Cell) => void;
}

const STOPS: [number, number, number][] = [
  [0xf7, 0xfb, 0xff],
  [0xfd, 0xae, 0x6b],
  [0xd9, 0x48, 0x01]
];

/** The colour of `f` in [0, 1] on the light -> orange -> dark orange scale. */
export function heatColour(f: number): string {
  const x = Math.max(0, Math.min(1, Number.isFinite(f) ? f : 0)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const k = x - i;
  const [a, b] = [STOPS[i], STOPS[i + 1]];
  const c = a.map((v, j) => Math.round(v + (b[j] - v) * k));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

const TOP = 34; // column name + labels
const LEGEND = 120; // the colour scale on the right
const FONT = 11;

export class HeatGrid {
  readonly el: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly tipEl: HTMLElement;
  private opts: HeatGridOptions | null = null;
  private byRow: Cell[][] = [];
  private min = 0;
  private max = 1;
  private lo = 0;
  private hi = 0; // rows [lo, hi) shown: fractional while zoomed, so every wheel step zooms by the same factor
  private labelW = 0;
  private readonly resize: ResizeObserver;
  private readonly themeObserver: MutationObserver;
  private readonly media: MediaQueryList | null;
  private readonly redraw = () => this.draw();
  private drag: { y: number; lo: number; moved: boolean } | null = null;
  private moved = false; // the last press dragged: its click is not a pick
  private pickTimer = 0;
  /** A drag goes on outside the canvas until the button is released anywhere. */
  private readonly dragMove = (e: MouseEvent) => {
    if (this.drag && this.opts) {
      this.drag.moved ||= Math.abs(e.clientY - this.drag.y) > 3;
      const rows = ((e.clientY - this.drag.y) / this.plot().h) * (this.hi - this.lo);
      this.setBand(this.drag.lo - rows, this.drag.lo - rows + (this.hi - this.lo));
    }
  };
  private frame = 0;

  constructor(height: number, className = '') {
    this.el = h('div', { class: `pi-chart pi-heatgrid ${className}`, style: `height:${height}px;position:relative` });
    this.canvas = h('canvas', { class: 'pi-heatgrid-canvas' }) as HTMLCanvasElement;
    this.tipEl = h('div', { class: 'pi-heatgrid-tip', role: 'tooltip', hidden: '' });
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(this.el);
    this.media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.media?.addEventListener('change', this.redraw);
    this.themeObserver = new MutationObserver(() => {
      this.draw();
      setTimeout(this.redraw, 300); // the lab's new CSS variables can land after the attribute
    });
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light'] });
    this.canvas.addEventListener('mousemove', e => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => {
      this.tipEl.hidden = true;
    });
    this.canvas.addEventListener('wheel', e => this.wheel(e), { passive: false });
    this.canvas.addEventListener('mousedown', e => {
      this.drag = { y: e.clientY, lo: this.lo, moved: false };
      this.tipEl.hidden = true;
      window.addEventListener('mousemove', this.dragMove);
    });
    window.addEventListener('mouseup', this.endDrag);
    this.canvas.addEventListener('click', e => {
      const cell = this.moved ? null : this.cellAt(e.offsetX, e.offsetY);
      const pick = this.opts?.pick;
      if (!cell || !pick || e.detail > 1) {
        return;
      }
      // wait for a second click: a double-click resets the zoom and opens nothing
      clearTimeout(this.pickTimer);
      this.pickTimer = window.setTimeout(() => pick(cell), 250);
    });
    this.canvas.addEventListener('dblclick', () => {
      clearTimeout(this.pickTimer);
      this.setBand(0, this.opts?.rows.length ?? 0);
    });
  }

  private readonly endDrag = () => {
    this.moved = this.drag?.moved ?? false;
    this.drag = null;
    window.removeEventListener('mousemove', this.dragMove);
  };

  /** New cells (a new figure picked): keeps the zoomed band, draws at once if the box has a size. */
  set(opts: HeatGridOptions, cells: Cell[]): void {
    const fresh = !this.opts || this.opts.rows.length !== opts.rows.length;
    this.opts = opts;
    this.byRow = opts.rows.map(() => []);
    let min = Infinity;
    let max = -Infinity;
    for (const c of cells) {
      this.byRow[c[1]]?.push(c);
      if (c[2] !== null) {
        min = Math.min(min, c[2]);
        max = Math.max(max, c[2]);
      }
    }
    [this.min, this.max] = Number.isFinite(min) ? [min, max] : [0, 1];
    if (fresh) {
      [this.lo, this.hi] = [0, opts.rows.length];
    }
    this.labelW = 0;
    this.draw();
  }

  /** Shows rows [lo, hi) (clamped to the rows, at least one row tall). */
  setBand(lo: number, hi: number): void {
    const n = this.opts?.rows.length ?? 0;
    const span = Math.max(1, Math.min(n, hi - lo));
    const start = Math.max(0, Math.min(n - span, lo));
    [this.lo, this.hi] = [start, start + span];
    this.schedule();
  }

  private schedule(): void {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.draw();
      });
    }
  }

  private plot(): { x: number; y: number; w: number; h: number } {
    return { x: this.labelW, y: TOP, w: Math.max(10, this.el.clientWidth - this.labelW - LEGEND), h: Math.max(10, this.el.clientHeight - TOP - 8) };
  }

  private draw(): void {
    const o = this.opts;
    const width = this.el.clientWidth;
    const height = this.el.clientHeight;
    if (!o || !this.el.isConnected || width === 0) {
      return; // drawn by the resize observer once the box has a size
    }
    if (!this.canvas.isConnected) {
      this.el.append(this.canvas, this.tipEl);
    }
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * dpr) || this.canvas.height !== Math.round(height * dpr)) {
      this.canvas.width = Math.round(width * dpr);
      this.canvas.height = Math.round(height * dpr);
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    const g = this.canvas.getContext('2d')!;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    const fg = cssVar(this.el, '--pi-fg', '#1b1b1f');
    const fg2 = cssVar(this.el, '--pi-fg2', '#5f6368');
    const border = cssVar(this.el, '--pi-border', '#d0d0d5');
    g.font = `${FONT}px ${cssVar(this.el, '--pi-font', 'sans-serif')}`;
    const rowH = (height - TOP - 8) / Math.max(1e-9, this.hi - this.lo);
    const first = Math.floor(this.lo);
    const last = Math.ceil(this.hi); // rows [first, last) are at least partly in view
    const rowLabels = rowH >= FONT;
    if (!this.labelW) {
      // the widest label that can be drawn (row labels when rows are tall enough at full zoom-in)
      let w = 0;
      for (const s of o.rows) {
        w = Math.max(w, g.measureText(s).width);
      }
      this.labelW = Math.min(220, Math.ceil(w) + 12);
    }
    const p = this.plot();
    const cols = Math.max(1, o.columns.length);
    const colW = p.w / cols;
    // cells
    const span = this.max - this.min;
    const gap = rowH >= 6 && colW >= 6 ? 1 : 0;
    g.save();
    g.beginPath();
    g.rect(p.x, p.y, p.w, p.h);
    g.clip();
    for (let r = first; r < last; r++) {
      const y = p.y + (r - this.lo) * rowH;
      for (const c of this.byRow[r] ?? []) {
        g.fillStyle = c[2] === null ? 'rgba(128,128,128,0.15)' : heatColour(span > 0 ? (c[2] - this.min) / span : 0.5);
        g.fillRect(p.x + c[0] * colW, y, Math.max(1, colW - gap), Math.max(1, rowH - gap));
      }
    }
    g.restore();
    g.strokeStyle = border;
    g.strokeRect(p.x - 0.5, p.y - 0.5, p.w + 1, p.h + 1);
    // row labels, or the blocks' labels at their first row where rows are thin
    g.fillStyle = fg2;
    g.textBaseline = 'middle';
    g.textAlign = 'right';
    let lastY = -Infinity;
    for (let r = first; r < last; r++) {
      const label = rowLabels ? o.rows[r] : r === first || o.blocks?.[r] ? (o.blocks?.[r] ?? o.rows[r]) : null;
      const y = rowLabels ? p.y + (r - this.lo + 0.5) * rowH : Math.max(p.y + FONT / 2, p.y + (r - this.lo) * rowH + FONT / 2);
      if (label && y - lastY >= FONT + 2 && y >= p.y && y <= p.y + p.h) {
        g.fillText(label, p.x - 6, y);
        lastY = y;
      }
    }
    // column labels, thinned to fit, and the axis name
    g.textAlign = 'center';
    g.textBaseline = 'bottom';
    let lastX = -Infinity;
    for (let i = 0; i < o.columns.length; i++) {
      const x = p.x + (i + 0.5) * colW;
      const w = g.measureText(o.columns[i]).width;
      if (x - w / 2 > lastX + 4) {
        g.fillText(o.columns[i], x, p.y - 3);
        lastX = x + w / 2;
      }
    }
    if (o.columnName) {
      g.fillStyle = fg;
      g.fillText(o.columnName, p.x + p.w / 2, p.y - 3 - FONT - 3);
    }
    // the colour scale
    const lx = p.x + p.w + 24;
    const lh = Math.min(100, p.h);
    const ly = p.y + (p.h - lh) / 2;
    for (let i = 0; i < lh; i++) {
      g.fillStyle = heatColour(1 - i / Math.max(1, lh - 1));
      g.fillRect(lx, ly + i, 14, 1);
    }
    g.strokeStyle = border;
    g.strokeRect(lx - 0.5, ly - 0.5, 15, lh + 1);
    g.fillStyle = fg2;
    g.textAlign = 'left';
    g.textBaseline = 'middle';
    g.fillText(o.fmt(this.max), lx + 20, ly);
    g.fillText(o.fmt(this.min), lx + 20, ly + lh);
    this.el.dataset.band = `${first}-${last - 1}`;
  }

  /** The cell under (x, y) in CSS pixels of the canvas, if any. */
  cellAt(x: number, y: number): Cell | null {
    const o = this.opts;
    if (!o) {
      return null;
    }
    const p = this.plot();
    if (x < p.x || x >= p.x + p.w || y < p.y || y >= p.y + p.h) {
      return null;
    }
    const row = Math.floor(this.lo + ((y - p.y) / p.h) * (this.hi - this.lo));
    const col = Math.floor(((x - p.x) / p.w) * Math.max(1, o.columns.length));
    return (this.byRow[row] ?? []).find(c => c[0] === col) ?? null;
  }

  private hover(e: MouseEvent): void {
    if (this.drag) {
      return; // moved by dragMove
    }
    const cell = this.cellAt(e.offsetX, e.offsetY);
    if (!cell || !this.opts) {
      this.tipEl.hidden = true;
      return;
    }
    this.tipEl.replaceChildren(...this.opts.tip(cell).map(line => h('div', {}, line)));
    this.tipEl.hidden = false;
    const right = e.offsetX + 14 + this.tipEl.offsetWidth > this.el.clientWidth;
    this.tipEl.style.left = `${right ? e.offsetX - 14 - this.tipEl.offsetWidth : e.offsetX + 14}px`;
    this.tipEl.style.top = `${Math.max(0, Math.min(this.el.clientHeight - this.tipEl.offsetHeight, e.offsetY + 10))}px`;
  }

  private wheel(e: WheelEvent): void {
    const n = this.opts?.rows.length ?? 0;
    if (n < 2) {
      return;
    }
    const p = this.plot();
    const at = this.lo + ((e.offsetY - p.y) / p.h) * (this.hi - this.lo);
    const span = this.hi - this.lo;
    const next = Math.max(1, Math.min(n, span * (e.deltaY < 0 ? 0.8 : 1.25)));
    if (next === span) {
      return; // at a limit: let the page scroll
    }
    e.preventDefault();
    const k = (at - this.lo) / span;
    this.setBand(at - k * next, at - k * next + next);
  }

  dispose(): void {
    this.resize.disconnect();
    this.themeObserver.disconnect();
    this.media?.removeEventListener('change', this.redraw);
    window.removeEventListener('mouseup', this.endDrag);
    window.removeEventListener('mousemove', this.dragMove);
    clearTimeout(this.pickTimer);
    if (this.frame) {
      cancelAnimationFrame(this.frame);
    }
  }
}
