/**
 * Where the timeline looks and how the user moves it: the time window (ns relative to the
 * origin), the vertical scroll, the canvas size, and the mouse/keyboard bindings.
 *
 * - wheel: scrolls the rows (a touchpad's sideways swipe, or Shift+wheel, pans in time);
 *   Ctrl+wheel (or Cmd+wheel, and a touchpad pinch, which browsers send as Ctrl+wheel) zooms at
 *   the cursor
 * - drag: pan in time and scroll the rows; a press without a move is a click
 * - drag on the ruler: select a time range over every track (its statistics open); Shift+drag
 *   over the rows: a box, the time range over the rows it spans (as the vendor's viewer selects)
 * - hover: the tooltip of the slice under the cursor
 * - keys (when no text field has focus): W/S zoom in/out at the cursor, A/D pan by a fifth of
 *   the window, M drops a marker at the cursor, Escape clears the selection and the range
 */
import { firstRowBelow, GUTTER_W, Row, RULER_H, SLICE_H, SliceCols, TRACK_PAD } from './model';
import type { Mark } from './renderer';

export const MIN_SPAN = 100; // ns
/** the left part of a track's gutter that pins / unpins it */
export const PIN_W = 24;
export const KEY_ZOOM = 1.35;
const WHEEL_ZOOM = 0.0015;

export class Viewport {
  start = 0;
  end = 1;
  scrollY = 0;
  width = 800;
  height = 400;
  /** height of all rows (the scrollable content below the ruler) */
  contentHeight = 0;
  /** height of the sticky (pinned) rows at the top of the layout, drawn without the scroll */
  stickyH = 0;
  /** the profile's extent: the window never leaves it by more than 10 % */
  private bounds: { start: number; end: number } | null = null;

  /** `changed` runs whenever the window moves (the view fetches and repaints). */
  constructor(
    private readonly vscroll: HTMLElement,
    private readonly changed: () => void
  ) {}

  get plotW(): number {
    return Math.max(1, this.width - GUTTER_W);
  }

  /** ns per css pixel of the plot */
  get pxNs(): number {
    return (this.end - this.start) / this.plotW;
  }

  /** Sets the extent and shows all of it. */
  setBounds(start: number, end: number): void {
    this.bounds = { start, end };
    this.start = start;
    this.end = Math.max(end, start + MIN_SPAN);
  }

  /** Sets the extent (an aligned multi-rank view moves ranks) and leaves the window where it is. */
  setExtent(start: number, end: number): void {
    this.bounds = { start, end: Math.max(end, start + MIN_SPAN) };
  }

  setWindow(a: number, b: number, margin = 0): void {
    const m = (b - a) * margin;
    this.start = a - m;
    this.end = b + m;
    this.clampWindow();
    this.changed();
  }

  clampWindow(): void {
    if (!this.bounds) {
      return;
    }
    let span = Math.max(MIN_SPAN, this.end - this.start);
    const full = Math.max(MIN_SPAN, this.bounds.end - this.bounds.start);
    span = Math.min(span, full * 1.2);
    const lo = this.bounds.start - full * 0.1;
    const hi = this.bounds.end + full * 0.1;
    let s = this.start;
    if (s < lo) {
      s = lo;
    }
    if (s + span > hi) {
      s = Math.max(lo, hi - span);
    }
    this.start = s;
    this.end = s + span;
  }

  reset(): void {
    if (this.bounds) {
      this.setWindow(this.bounds.start, Math.max(this.bounds.end, this.bounds.start + MIN_SPAN));
    }
  }

  /** Zooms by `factor` (< 1 zooms in) keeping the time under `anchorPx` (default: the middle) in place. */
  zoom(factor: number, anchorPx?: number): void {
    const plotW = this.plotW;
    const frac = anchorPx === undefined ? 0.5 : Math.min(1, Math.max(0, (anchorPx - GUTTER_W) / plotW));
    const at = this.start + (this.end - this.start) * frac;
    const span = Math.max(MIN_SPAN, (this.end - this.start) * factor);
    this.start = at - span * frac;
    this.end = this.start + span;
    this.clampWindow();
    this.changed();
  }

  /** Moves the window by `frac` of its span. */
  pan(frac: number): void {
    const d = (this.end - this.start) * frac;
    this.start += d;
    this.end += d;
    this.clampWindow();
    this.changed();
  }

  scrollTo(y: number): void {
    const max = Math.max(0, this.contentHeight - (this.height - RULER_H));
    this.scrollY = Math.max(0, Math.min(max, y));
    this.vscroll.scrollTop = this.scrollY;
  }

  /** Canvas x (css px) of a relative time. */
  xOf(ns: number): number {
    return GUTTER_W + ((ns - this.start) / (this.end - this.start)) * (this.width - GUTTER_W);
  }
}

/** What a click on the canvas landed on. */
export type Hit =
  | { kind: 'nothing' }
  | { kind: 'header'; key: string } // a rank or unit header: collapse / expand
  | { kind: 'lanes'; key: string } // the gutter of a capped track: "show all N levels" / "show 8"
  | { kind: 'miss' } // a slice track, between slices
  | { kind: 'pin'; key: string } // the pin at the left of a track's gutter: pin / unpin it
  | { kind: 'merged'; start: number; end: number; name: string; count: number; track: string; rank: number } // a bucket of sub-pixel slices
  | { kind: 'slice'; mark: Mark };

/** The row and slice under canvas point (x, y) in css px. */
export function hitTest(vp: Viewport, rows: Row[], slices: Map<string, SliceCols> | undefined, x: number, y: number): Hit {
  if (y < RULER_H) {
    return { kind: 'nothing' };
  }
  // over the sticky rows the layout's y is the screen's; below them the rows scroll
  const cy = y - RULER_H < vp.stickyH ? y - RULER_H : y - RULER_H + vp.scrollY;
  const row = rows[firstRowBelow(rows, cy)];
  if (!row || row.y > cy) {
    return { kind: 'nothing' };
  }
  if (row.kind !== 'track') {
    return { kind: 'header', key: row.key };
  }
  if (x < PIN_W) {
    return { kind: 'pin', key: row.key };
  }
  if (x < GUTTER_W && row.capped) {
    return { kind: 'lanes', key: row.key };
  }
  if (x < GUTTER_W || !row.track || row.track.kind !== 'slice') {
    return { kind: 'nothing' };
  }
  const d = slices?.get(row.key);
  if (!d) {
    return { kind: 'nothing' };
  }
  const depth = Math.floor((cy - row.y - TRACK_PAD) / SLICE_H);
  if (depth >= (row.lanes ?? Infinity)) {
    return { kind: 'nothing' };
  }
  const pxNs = vp.pxNs;
  const t = vp.start + (x - GUTTER_W) * pxNs;
  let best = -1;
  for (let j = 0; j < d.start_ns.length; j++) {
    if (d.depth[j] !== depth) {
      continue;
    }
    const a = d.start_ns[j];
    const b = a + Math.max(d.dur_ns[j], pxNs); // thin slices get one pixel
    if (t >= a - pxNs && t <= b) {
      if (
        best < 0 ||
        Math.abs(a - t) < Math.abs(d.start_ns[best] - t) ||
        (t >= a && t <= b && !(t >= d.start_ns[best] && t <= d.start_ns[best] + d.dur_ns[best]))
      ) {
        best = j;
      }
      if (t >= a && t <= a + d.dur_ns[j]) {
        best = j;
        break;
      }
    }
  }
  if (best < 0) {
    return { kind: 'miss' };
  }
  if (d.merged[best] === 1 || d.id[best] < 0 || !d.source) {
    return {
      kind: 'merged',
      start: d.start_ns[best],
      end: d.start_ns[best] + Math.max(d.dur_ns[best], MIN_SPAN),
      name: d.names[d.name[best]],
      count: d.count[best],
      track: row.key,
      rank: row.rank
    };
  }
  return {
    kind: 'slice',
    mark: {
      track: row.key,
      kind: d.source,
      rank: row.rank,
      id: d.id[best],
      name: d.names[d.name[best]],
      start_ns: d.start_ns[best],
      dur_ns: d.dur_ns[best],
      depth: d.depth[best]
    }
  };
}

/** What the bindings ask of the view. */
export interface InputActions {
  /** whether keys apply now (the view is shown, laid out and in the page) */
  active(): boolean;
  changed(): void;
  click(x: number, y: number): void;
  clearSelection(): void;
  /** the pointer over the canvas (css px in the canvas, and in the page), or null when it left */
  hover(at: { x: number; y: number; clientX: number; clientY: number } | null): void;
  /**
   * a range being dragged (`done` false) or released (`done` true), relative ns; `rows` the
   * canvas y span of a box dragged over the rows (null: a ruler drag, every row)
   */
  range(start: number, end: number, done: boolean, rows: { y0: number; y1: number } | null): void;
  /** drop a marker at a relative time */
  mark(ns: number): void;
}

/**
 * Mouse and keyboard bindings of the canvas.  Returns the function that removes the listeners
 * outside the canvas (window and document ones).
 */
export function bindInput(canvas: HTMLCanvasElement, root: HTMLElement, vp: Viewport, act: InputActions): () => void {
  let drag: {
    x: number;
    y: number;
    start: number;
    end: number;
    scroll: number;
    moved: boolean;
    range: boolean;
    /** canvas y where a box drag began (null: a ruler drag) */
    y0: number | null;
    t0: number;
  } | null = null;
  let mouseX: number | null = null;

  const wheel = (e: WheelEvent): void => {
    e.preventDefault();
    const x = e.offsetX;
    const unit = e.deltaMode === 1 ? 30 : e.deltaMode === 2 ? vp.height : 1;
    const dy = e.deltaY * unit;
    const dx = e.deltaX * unit;
    if ((e.ctrlKey || e.metaKey) && x >= GUTTER_W) {
      vp.zoom(Math.exp(dy * WHEEL_ZOOM), x);
      return;
    }
    const sideways = e.shiftKey ? dy || dx : Math.abs(dx) > Math.abs(dy) ? dx : 0;
    if (sideways && x >= GUTTER_W) {
      vp.pan(sideways / Math.max(1, vp.width - GUTTER_W));
      return;
    }
    vp.scrollTo(vp.scrollY + dy);
    act.changed();
  };

  const tAt = (x: number) => vp.start + (x - GUTTER_W) * vp.pxNs;
  /** the canvas y span of a box drag from `y0` to the pointer, or null for a ruler drag */
  const box = (y0: number | null, e: MouseEvent): { y0: number; y1: number } | null => {
    if (y0 === null) {
      return null;
    }
    const y = Math.max(RULER_H, Math.min(vp.height, e.clientY - canvas.getBoundingClientRect().top));
    return { y0: Math.min(y0, y), y1: Math.max(y0, y) };
  };

  const down = (e: MouseEvent): void => {
    if (e.button !== 0) {
      return;
    }
    root.focus({ preventScroll: true });
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const range = x >= GUTTER_W && (e.shiftKey || y < RULER_H);
    const y0 = range && y >= RULER_H ? y : null;
    drag = { x: e.clientX, y: e.clientY, start: vp.start, end: vp.end, scroll: vp.scrollY, moved: false, range, y0, t0: tAt(x) };
    act.hover(null);
  };

  const move = (e: MouseEvent): void => {
    const rect = canvas.getBoundingClientRect();
    mouseX = e.clientX - rect.left;
    if (!drag) {
      const inside = e.target === canvas;
      act.hover(inside ? { x: mouseX, y: e.clientY - rect.top, clientX: e.clientX, clientY: e.clientY } : null);
      return;
    }
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) {
      return;
    }
    drag.moved = true;
    if (drag.range) {
      const t = tAt(Math.max(GUTTER_W, Math.min(vp.width, mouseX)));
      act.range(Math.min(drag.t0, t), Math.max(drag.t0, t), false, box(drag.y0, e));
      return;
    }
    const pxNs = (drag.end - drag.start) / Math.max(1, vp.width - GUTTER_W);
    vp.start = drag.start - dx * pxNs;
    vp.end = drag.end - dx * pxNs;
    vp.clampWindow();
    vp.scrollTo(drag.scroll - dy);
    act.changed();
  };

  const up = (e: MouseEvent): void => {
    const d = drag;
    drag = null;
    if (!d) {
      return;
    }
    const rect = canvas.getBoundingClientRect();
    if (d.range && d.moved) {
      const t = tAt(Math.max(GUTTER_W, Math.min(vp.width, e.clientX - rect.left)));
      act.range(Math.min(d.t0, t), Math.max(d.t0, t), true, box(d.y0, e));
      return;
    }
    if (d.moved) {
      return;
    }
    act.click(e.clientX - rect.left, e.clientY - rect.top);
  };

  const key = (e: KeyboardEvent): void => {
    if (!act.active()) {
      return;
    }
    const tgt = e.target as HTMLElement | null;
    if (tgt && (tgt.tagName === 'INPUT' || tgt.tagName === 'SELECT' || tgt.tagName === 'TEXTAREA')) {
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    const anchor = mouseX !== null && mouseX >= GUTTER_W ? mouseX : undefined;
    switch (e.key.toLowerCase()) {
      case 'w':
        vp.zoom(1 / KEY_ZOOM, anchor);
        break;
      case 's':
        vp.zoom(KEY_ZOOM, anchor);
        break;
      case 'a':
        vp.pan(-0.2);
        break;
      case 'd':
        vp.pan(0.2);
        break;
      case 'm':
        act.mark(tAt(anchor ?? GUTTER_W + vp.plotW / 2));
        break;
      case 'escape':
        act.clearSelection();
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  canvas.addEventListener('wheel', wheel, { passive: false });
  canvas.addEventListener('mousedown', down);
  window.addEventListener('mousemove', move);
  window.addEventListener('mouseup', up);
  canvas.addEventListener('mouseleave', () => {
    mouseX = null;
    act.hover(null);
  });
  document.addEventListener('keydown', key);
  return () => {
    document.removeEventListener('keydown', key);
    window.removeEventListener('mousemove', move);
    window.removeEventListener('mouseup', up);
  };
}
