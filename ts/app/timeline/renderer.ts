/**
 * Canvas drawing of the timeline.  One call draws one frame from what is already in memory
 * (no fetching, no layout): only the rows inside the vertical viewport and only the slices that
 * intersect the time window are touched, so a frame costs what is visible, not what is loaded.
 * Text on a canvas is never parsed as markup, so op names are safe here.
 */
import { fmtBytes, fmtNumber } from '../dom';
import {
  CounterCols,
  firstRowBelow,
  GUTTER_W,
  LANE_CAP,
  nameColor,
  Row,
  rowTop,
  RULER_H,
  SLICE_H,
  SliceCols,
  tickLabel,
  tickStep,
  TRACK_PAD
} from './model';
import type { Flow, TimelineSlice } from '../generated/wire';

/** A slice where it sits on the timeline (a selection, an arrow's end, a search hit). */
export type Mark = TimelineSlice;

export type { Flow };

export interface Scene {
  width: number;
  height: number;
  rows: Row[];
  scrollY: number;
  /** height of the sticky rows at the top of `rows` (drawn under the ruler, not scrolled) */
  stickyH: number;
  start: number;
  end: number;
  slices: Map<string, SliceCols>;
  counters: Map<string, CounterCols>;
  /** the window (relative ns) the counters in memory were fetched for, or null */
  counterSpan: { start: number; end: number } | null;
  /** device idle gaps per rank, [start, end] relative ns */
  gaps: Map<number, [number, number][]>;
  selected: Mark | null;
  flows: Flow[];
  /** the drag-selected time range (relative ns), or null */
  range: { start: number; end: number } | null;
  /** the tracks of a range dragged as a box over rows (their rows are tinted); null: every row */
  rangeRows: Set<string> | null;
  /** markers (flags) the user dropped, relative ns */
  markers: number[];
  /** the anchor of an aligned multi-rank view on every rank (the same collective), outlined */
  highlights: Mark[];
  /** the time the ranks are lined up at (relative ns), a line through every row; null: none */
  anchor: number | null;
  /** row of a track (its own, or its collapsed unit/rank header) */
  rowOf: (track: string, rank: number) => Row | null;
  t: (k: string, v?: Record<string, string | number>) => string;
  colors: { fg: string; fg2: string; bg: string; bg2: string; border: string; accent: string; error: string };
}

export interface FrameInfo {
  arrows: number;
  gaps: number;
  slices: number;
  /** the ruler's labels, left to right (what a reader sees of the time axis) */
  ticks?: string[];
  /** ms the frame took to draw (set by the view) */
  ms?: number;
}

let hatch: CanvasPattern | null = null;

function gapPattern(ctx: CanvasRenderingContext2D): CanvasPattern | null {
  if (hatch) {
    return hatch;
  }
  const c = document.createElement('canvas');
  c.width = c.height = 8;
  const g = c.getContext('2d');
  if (!g) {
    return null;
  }
  g.fillStyle = 'rgba(220, 60, 50, 0.10)';
  g.fillRect(0, 0, 8, 8);
  g.strokeStyle = 'rgba(220, 60, 50, 0.45)';
  g.lineWidth = 1.5;
  g.beginPath();
  g.moveTo(0, 8);
  g.lineTo(8, 0);
  g.moveTo(-2, 2);
  g.lineTo(2, -2);
  g.moveTo(6, 10);
  g.lineTo(10, 6);
  g.stroke();
  hatch = ctx.createPattern(c, 'repeat');
  return hatch;
}

/** y (canvas px, top of the depth lane) of `depth` in a track row. */
export function laneY(row: Row, depth: number, scrollY: number): number {
  if (row.kind !== 'track') {
    return rowTop(row, scrollY) + row.h / 2 - SLICE_H / 2;
  }
  // a level hidden by the lane cap: point at the last lane drawn
  const lane = row.lanes !== undefined ? Math.min(depth, row.lanes - 1) : depth;
  return rowTop(row, scrollY) + TRACK_PAD + lane * SLICE_H;
}

export function draw(ctx: CanvasRenderingContext2D, s: Scene): FrameInfo {
  const { width, height, colors } = s;
  const plotW = Math.max(1, width - GUTTER_W);
  const pxNs = (s.end - s.start) / plotW;
  const xOf = (ns: number) => GUTTER_W + (ns - s.start) / pxNs;
  const info: FrameInfo = { arrows: 0, gaps: 0, slices: 0 };
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, width, height);
  ctx.textBaseline = 'middle';
  ctx.font = '11px system-ui, sans-serif';

  // the rows that scroll, clipped below the sticky (pinned) rows, then the sticky rows on top
  const stickyH = Math.min(s.stickyH, Math.max(0, height - RULER_H));
  const first = firstRowBelow(s.rows, s.scrollY + stickyH);
  const bottom = s.scrollY + height - RULER_H;
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, RULER_H + stickyH, width, height - RULER_H - stickyH);
  ctx.clip();
  for (let i = first; i < s.rows.length && s.rows[i].y < bottom; i++) {
    drawRow(ctx, s, s.rows[i], RULER_H + s.rows[i].y - s.scrollY, plotW, xOf, pxNs, info);
  }
  ctx.restore();
  ctx.save();
  ctx.beginPath();
  ctx.rect(0, RULER_H, width, height - RULER_H);
  ctx.clip();
  if (stickyH > 0) {
    for (let i = 0; i < s.rows.length && s.rows[i].sticky; i++) {
      drawRow(ctx, s, s.rows[i], RULER_H + s.rows[i].y, plotW, xOf, pxNs, info);
    }
    // the edge the scrolling rows slide under
    ctx.strokeStyle = colors.accent;
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(0, RULER_H + stickyH - 1);
    ctx.lineTo(width, RULER_H + stickyH - 1);
    ctx.stroke();
  }
  info.arrows = drawFlows(ctx, s, xOf);
  if (s.selected) {
    const row = s.rowOf(s.selected.track, s.selected.rank);
    if (row) {
      const y = laneY(row, row.kind === 'track' ? s.selected.depth : 0, s.scrollY);
      const x0 = xOf(s.selected.start_ns);
      const x1 = Math.max(x0 + 2, xOf(s.selected.start_ns + s.selected.dur_ns));
      ctx.save();
      ctx.beginPath();
      ctx.rect(GUTTER_W, RULER_H, plotW, height - RULER_H);
      ctx.clip();
      ctx.strokeStyle = colors.fg;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0, y + 0.5, x1 - x0, SLICE_H - 2);
      ctx.restore();
    }
  }
  drawHighlights(ctx, s, xOf, plotW);
  drawRange(ctx, s, xOf);
  ctx.restore();
  info.ticks = drawRuler(ctx, s, pxNs, xOf);
  drawMarkers(ctx, s, xOf);
  // gutter border
  ctx.strokeStyle = colors.border;
  ctx.beginPath();
  ctx.moveTo(GUTTER_W - 0.5, 0);
  ctx.lineTo(GUTTER_W - 0.5, height);
  ctx.stroke();
  return info;
}

/** One row (track area, separator, gutter label) with its top at canvas y `top`. */
function drawRow(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  row: Row,
  top: number,
  plotW: number,
  xOf: (ns: number) => number,
  pxNs: number,
  info: FrameInfo
): void {
  const { width, colors } = s;
  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER_W, top, plotW, row.h);
  ctx.clip();
  if (row.kind === 'track' && row.track) {
    if (row.sticky) {
      ctx.fillStyle = colors.bg;
      ctx.fillRect(GUTTER_W, top, plotW, row.h);
    }
    if (row.unit && row.unit.kind === 'device') {
      info.gaps += drawGaps(ctx, s, row.rank, top, row.h, xOf);
    }
    if (row.track.kind === 'slice') {
      info.slices += drawSlices(ctx, s, row, top, xOf, pxNs);
    } else {
      drawCounter(ctx, s, row, top, xOf);
    }
  } else {
    ctx.fillStyle = row.kind === 'rank' ? colors.bg2 : colors.bg;
    ctx.fillRect(GUTTER_W, top, plotW, row.h);
    // idle device time shows on the rank header too, so it jumps out even when scrolled away
    if (row.kind === 'rank' || (row.kind === 'unit' && row.unit && row.unit.kind === 'device')) {
      info.gaps += drawGaps(ctx, s, row.rank, top, row.h, xOf);
    }
  }
  ctx.restore();
  // separator and gutter label
  ctx.strokeStyle = colors.border;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(0, top + row.h - 0.5);
  ctx.lineTo(width, top + row.h - 0.5);
  ctx.stroke();
  drawLabel(ctx, s, row, top);
}

function drawLabel(ctx: CanvasRenderingContext2D, s: Scene, row: Row, top: number): void {
  const { colors } = s;
  ctx.fillStyle = row.kind === 'rank' ? colors.bg2 : colors.bg;
  ctx.fillRect(0, top, GUTTER_W - 1, row.h - 1);
  const mid = top + Math.min(row.h, 22) / 2;
  let x = 6;
  ctx.fillStyle = colors.fg;
  if (row.kind === 'rank' || row.kind === 'unit') {
    x = row.kind === 'rank' ? 6 : 16;
    ctx.font = row.kind === 'rank' ? 'bold 12px system-ui, sans-serif' : '600 11px system-ui, sans-serif';
    ctx.fillText(row.collapsed ? '▸' : '▾', x, mid);
    x += 14;
    let label = row.label;
    if (row.kind === 'unit' && row.unit) {
      label += `  (${row.unit.tracks.length})`;
    }
    ctx.fillText(clip(ctx, label, GUTTER_W - x - 6), x, mid);
  } else {
    x = 30;
    // the pin toggle (PIN_W): filled on a pinned track
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillStyle = row.pinned ? colors.accent : colors.border;
    ctx.fillText(row.pinned ? '◆' : '◇', 9, mid);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = colors.fg2;
    ctx.fillText(clip(ctx, row.label, GUTTER_W - x - 6), x, mid);
    if (row.capped && row.track) {
      const all = (row.lanes ?? 0) < row.track.depth;
      ctx.fillStyle = colors.accent;
      const text = all ? s.t('ui.timeline.lanes_all', { n: row.track.depth }) : s.t('ui.timeline.lanes_few', { n: LANE_CAP });
      ctx.fillText(clip(ctx, text, GUTTER_W - x - 6), x, mid + 18);
    }
  }
  ctx.font = '11px system-ui, sans-serif';
}

/** `text` cut with an ellipsis to fit `w` px (binary search on length: few measureText calls). */
export function clip(ctx: CanvasRenderingContext2D, text: string, w: number): string {
  if (w <= 8) {
    return '';
  }
  if (ctx.measureText(text).width <= w) {
    return text;
  }
  let lo = 0;
  let hi = Math.min(text.length, 200);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(text.slice(0, mid) + '…').width <= w) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo > 0 ? text.slice(0, lo) + '…' : '';
}

function drawGaps(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  rank: number,
  top: number,
  h: number,
  xOf: (ns: number) => number
): number {
  const gaps = s.gaps.get(rank);
  if (!gaps) {
    return 0;
  }
  const pat = gapPattern(ctx);
  ctx.fillStyle = pat || 'rgba(220, 60, 50, 0.15)';
  // one path for all gaps, with gaps that touch on screen joined: a zoomed-out profile has
  // thousands, and a pattern fill per gap per row made each frame slow
  ctx.beginPath();
  let n = 0;
  let runA = 0;
  let runB = -Infinity;
  // a rank's gaps are disjoint and sorted: start at the first that ends in the window
  let lo = 0;
  let hi = gaps.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (gaps[mid][1] < s.start) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (let k = lo; k < gaps.length; k++) {
    const [a, b] = gaps[k];
    if (a > s.end) {
      break;
    }
    n++;
    const x0 = xOf(a);
    const x1 = Math.max(x0 + 2, xOf(b));
    if (x0 <= runB + 1) {
      runB = Math.max(runB, x1);
      continue;
    }
    if (runB > -Infinity) {
      ctx.rect(runA, top, runB - runA, h - 1);
    }
    runA = x0;
    runB = x1;
  }
  if (runB > -Infinity) {
    ctx.rect(runA, top, runB - runA, h - 1);
  }
  ctx.fill();
  return n;
}

function drawSlices(
  ctx: CanvasRenderingContext2D,
  s: Scene,
  row: Row,
  top: number,
  xOf: (ns: number) => number,
  pxNs: number
): number {
  const d = s.slices.get(row.key);
  if (!d) {
    return 0;
  }
  const n = d.start_ns.length;
  let drawn = 0;
  // rows come sorted by start: skip to the window with a binary search on start
  const longest = row.track ? row.track.end_ns - row.track.start_ns : 0;
  let i = lowerBound(d.start_ns, s.start - longest);
  const minTextPx = 36;
  const lanes = row.lanes ?? Infinity;
  // Rectangles are batched per colour (name code x merged) and filled as one path each, and a
  // rectangle that continues the previous one of its batch on the same lane extends it: a
  // zoomed-out dense track is thousands of one-pixel blocks, and one fillRect with its own
  // fillStyle per block made frames of the device streams take 100+ ms.
  const batches = new Map<number, number[]>();
  const labels: number[] = [];
  const lastLabel = new Map<number, number>(); // lane y -> index in labels
  for (; i < n; i++) {
    const st = d.start_ns[i];
    if (st > s.end) {
      break;
    }
    if (d.depth[i] >= lanes) {
      continue; // below the lane cap (the gutter offers "show all levels")
    }
    const en = st + d.dur_ns[i];
    if (en < s.start) {
      continue;
    }
    const x0 = Math.max(GUTTER_W - 2, xOf(st));
    const x1 = Math.min(s.width + 2, xOf(en));
    const w = Math.max(1, x1 - x0);
    const y = top + TRACK_PAD + d.depth[i] * SLICE_H;
    const merged = d.merged[i] === 1;
    const key = d.name[i] * 2 + (merged ? 1 : 0);
    let b = batches.get(key);
    if (!b) {
      b = [];
      batches.set(key, b);
    }
    const k = b.length - 3;
    if (k >= 0 && b[k + 1] === y && x0 <= b[k] + b[k + 2] + 0.5) {
      b[k + 2] = Math.max(b[k + 2], x0 + w - b[k]);
    } else {
      b.push(x0, y, w);
    }
    drawn++;
    // a slice that starts inside the previous labelled one of its lane (partly overlapping
    // rows share a lane) cuts that label short, as painting it on top used to
    const last = lastLabel.get(y);
    if (last !== undefined && x0 < labels[last + 1] + labels[last + 3]) {
      labels[last + 3] = x0 - labels[last + 1];
    }
    if (!merged && w >= minTextPx) {
      lastLabel.set(y, labels.length);
      labels.push(i, x0, y, w);
    }
  }
  for (const [key, b] of batches) {
    ctx.fillStyle = d.colors[key >> 1];
    ctx.globalAlpha = key & 1 ? 0.55 : 1;
    ctx.beginPath();
    for (let j = 0; j < b.length; j += 3) {
      ctx.rect(b[j], b[j + 1], b[j + 2], SLICE_H - 1);
    }
    ctx.fill();
  }
  ctx.globalAlpha = 1;
  ctx.fillStyle = '#111';
  for (let j = 0; j < labels.length; j += 4) {
    const text = clip(ctx, d.names[d.name[labels[j]]], labels[j + 3] - 6);
    if (text) {
      ctx.fillText(text, labels[j + 1] + 3, labels[j + 2] + SLICE_H / 2);
    }
  }
  void pxNs;
  return drawn;
}

function lowerBound(a: number[], v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/**
 * A counter row drawn once per answer and scale into an image of the whole fetched window, then
 * copied at each frame's offset: a drag pans at one scale, and filling and stroking thousands of
 * path points per counter row every frame was most of a frame's time where counters are on
 * screen (the browser rasterises paths in software here).  Built on the second frame at a scale,
 * so a zoom (a new scale every frame) keeps drawing directly.
 */
interface CounterImage {
  d: CounterCols;
  pxNs: number;
  h: number;
  start: number;
  seen: number;
  img: HTMLCanvasElement | null;
}

const counterImages = new Map<string, CounterImage>();
/** the most counter rows kept as images (about 0.4 MB each) */
const COUNTER_IMAGES = 48;
/** wider images are not made (the fetched window is twice a screen) */
const COUNTER_IMAGE_MAX_W = 8192;

function drawCounter(ctx: CanvasRenderingContext2D, s: Scene, row: Row, top: number, xOf: (ns: number) => number): void {
  const d = s.counters.get(row.key);
  if (!d || !row.track) {
    return;
  }
  let hi = d.before ? d.before.value : -Infinity;
  let lo = d.before ? d.before.value : Infinity;
  for (let i = 0; i < d.max.length; i++) {
    hi = Math.max(hi, d.max[i]);
    lo = Math.min(lo, d.min[i]);
  }
  if (!Number.isFinite(hi)) {
    return;
  }
  const color = nameColor(row.track.name);
  const pxNs = (s.end - s.start) / Math.max(1, s.width - GUTTER_W);
  const span = s.counterSpan;
  let c = counterImages.get(row.key);
  if (!c || c.d !== d || c.h !== row.h || Math.abs(c.pxNs - pxNs) > pxNs * 1e-9 || !span || c.start !== span.start) {
    c = { d, pxNs, h: row.h, start: span ? span.start : 0, seen: 0, img: null };
  }
  counterImages.delete(row.key);
  counterImages.set(row.key, c); // most recent last
  if (counterImages.size > COUNTER_IMAGES) {
    counterImages.delete(counterImages.keys().next().value as string);
  }
  c.seen++;
  const w = span ? Math.ceil((span.end - span.start) / pxNs) + 1 : Infinity;
  if (span && c.seen >= 2 && w <= COUNTER_IMAGE_MAX_W && s.start >= span.start && s.end <= span.end) {
    if (!c.img) {
      const dpr = window.devicePixelRatio || 1;
      const img = document.createElement('canvas');
      img.width = Math.ceil(w * dpr);
      img.height = Math.ceil(row.h * dpr);
      const g = img.getContext('2d');
      if (g) {
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        counterArea(g, d, row, 0, ns => (ns - span.start) / pxNs, 0, w, span.start, span.end, hi, lo, color);
        c.img = img;
      }
    }
    if (c.img) {
      ctx.drawImage(c.img, Math.round(xOf(span.start)), top, c.img.width / (window.devicePixelRatio || 1), row.h);
    }
  } else {
    counterArea(ctx, d, row, top, xOf, GUTTER_W, s.width, s.start, s.end, hi, lo, color);
  }
  // peak of the window, top right of the track, in the track's unit
  const unit = row.track.value_unit;
  const peak = unit === 'bytes' ? fmtBytes(hi) : `${fmtNumber(hi, 2)}${unit ? ' ' + unit : ''}`;
  ctx.fillStyle = s.colors.fg2;
  ctx.fillText(s.t('ui.timeline.peak', { value: peak }), GUTTER_W + 4, top + 9);
}

/** The area and outline of a counter row between x `left` and `right` (times `start`..`end`). */
function counterArea(
  ctx: CanvasRenderingContext2D,
  d: CounterCols,
  row: Row,
  top: number,
  xOf: (ns: number) => number,
  left: number,
  right: number,
  start: number,
  end: number,
  hi: number,
  lo: number,
  color: string
): void {
  const base = Math.min(0, lo);
  const range = hi - base || 1;
  const h = row.h - 8;
  const yOf = (v: number) => top + 4 + h - ((v - base) / range) * h;
  ctx.beginPath();
  const y0 = yOf(base);
  // only the buckets in [start, end] become path points: the answer covers twice the window
  // (panning redraws from memory)
  const i0 = lowerBound(d.end_ns, start);
  const i1 = lowerBound(d.start_ns, end + 1);
  let x = i0 > 0 ? left : xOf(d.before ? d.before.ts_ns : d.start_ns.length ? d.start_ns[0] : start);
  ctx.moveTo(Math.max(left, x), y0);
  let last = i0 > 0 ? d.last[i0 - 1] : d.before ? d.before.value : null;
  if (last !== null) {
    ctx.lineTo(Math.max(left, x), yOf(last));
  }
  for (let i = i0; i < i1; i++) {
    const xs = xOf(d.start_ns[i]);
    const xe = Math.max(xs + 1, xOf(d.end_ns[i]));
    if (last !== null) {
      ctx.lineTo(xs, yOf(last));
    } else {
      ctx.lineTo(xs, y0);
    }
    // the bucket's peak: the area reaches the max, so spikes show at every zoom
    ctx.lineTo(xs, yOf(d.max[i]));
    ctx.lineTo(xe, yOf(d.max[i]));
    ctx.lineTo(xe, yOf(d.last[i]));
    last = d.last[i];
    x = xe;
  }
  const xEnd = Math.min(right, Math.max(x, xOf(row.track!.end_ns)));
  if (last !== null) {
    ctx.lineTo(xEnd, yOf(last));
  }
  ctx.lineTo(xEnd, y0);
  ctx.closePath();
  ctx.globalAlpha = 0.45;
  ctx.fillStyle = color;
  ctx.fill();
  ctx.globalAlpha = 1;
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.stroke();
}

function drawFlows(ctx: CanvasRenderingContext2D, s: Scene, xOf: (ns: number) => number): number {
  let n = 0;
  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER_W, RULER_H, s.width - GUTTER_W, s.height - RULER_H);
  ctx.clip();
  ctx.strokeStyle = s.colors.accent;
  ctx.fillStyle = s.colors.accent;
  ctx.lineWidth = 1.5;
  for (const f of s.flows) {
    const ra = s.rowOf(f.from.track, f.from.rank);
    const rb = s.rowOf(f.to.track, f.to.rank);
    if (!ra || !rb) {
      continue;
    }
    const ya = laneY(ra, ra.kind === 'track' ? f.from.depth : 0, s.scrollY) + SLICE_H / 2;
    const yb = laneY(rb, rb.kind === 'track' ? f.to.depth : 0, s.scrollY) + SLICE_H / 2;
    const xa = xOf(f.from.start_ns);
    const xb = xOf(f.to.start_ns);
    const down = yb >= ya;
    const y0 = ya + (down ? SLICE_H / 2 : -SLICE_H / 2);
    const y1 = yb + (down ? -SLICE_H / 2 : SLICE_H / 2);
    ctx.beginPath();
    ctx.moveTo(xa, y0);
    const my = (y0 + y1) / 2;
    ctx.bezierCurveTo(xa, my, xb, my, xb, y1);
    ctx.stroke();
    // arrow head at the device end
    const dir = down ? 1 : -1;
    ctx.beginPath();
    ctx.moveTo(xb, y1);
    ctx.lineTo(xb - 4, y1 - 7 * dir);
    ctx.lineTo(xb + 4, y1 - 7 * dir);
    ctx.closePath();
    ctx.fill();
    n++;
  }
  ctx.restore();
  return n;
}

/** Draws the time axis; returns its labels. */
function drawRuler(ctx: CanvasRenderingContext2D, s: Scene, pxNs: number, xOf: (ns: number) => number): string[] {
  const labels: string[] = [];
  const { colors } = s;
  ctx.fillStyle = colors.bg2;
  ctx.fillRect(0, 0, s.width, RULER_H);
  ctx.strokeStyle = colors.border;
  ctx.beginPath();
  ctx.moveTo(0, RULER_H - 0.5);
  ctx.lineTo(s.width, RULER_H - 0.5);
  ctx.stroke();
  const step = tickStep(pxNs);
  const first = Math.ceil(s.start / step) * step;
  ctx.fillStyle = colors.fg2;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (let v = first; v <= s.end; v += step) {
    const x = Math.round(xOf(v)) + 0.5;
    if (x < GUTTER_W) {
      continue;
    }
    ctx.beginPath();
    ctx.moveTo(x, RULER_H - 8);
    ctx.lineTo(x, RULER_H);
    ctx.stroke();
    const label = tickLabel(v, step, Math.max(Math.abs(s.start), Math.abs(s.end)));
    labels.push(label);
    ctx.fillText(label, x + 3, RULER_H / 2 - 2);
  }
  ctx.fillStyle = colors.bg2;
  ctx.fillRect(0, 0, GUTTER_W - 1, RULER_H - 1);
  ctx.fillStyle = colors.fg2;
  ctx.fillText(s.t('ui.timeline.ruler'), 6, RULER_H / 2);
  return labels;
}

/** The alignment's anchor: the same collective outlined on every rank, and a line at the time
 * they are lined up at. */
function drawHighlights(ctx: CanvasRenderingContext2D, s: Scene, xOf: (ns: number) => number, plotW: number): void {
  if (!s.highlights.length && s.anchor === null) {
    return;
  }
  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER_W, RULER_H, plotW, s.height - RULER_H);
  ctx.clip();
  ctx.strokeStyle = s.colors.accent;
  if (s.anchor !== null) {
    const x = Math.round(xOf(s.anchor)) + 0.5;
    ctx.lineWidth = 1;
    ctx.setLineDash([2, 3]);
    ctx.beginPath();
    ctx.moveTo(x, RULER_H);
    ctx.lineTo(x, s.height);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  ctx.lineWidth = 2;
  for (const m of s.highlights) {
    const row = s.rowOf(m.track, m.rank);
    if (!row) {
      continue;
    }
    const y = laneY(row, row.kind === 'track' ? m.depth : 0, s.scrollY);
    const x0 = xOf(m.start_ns);
    const x1 = Math.max(x0 + 3, xOf(m.start_ns + m.dur_ns));
    ctx.fillStyle = 'rgba(26, 115, 232, 0.18)';
    ctx.fillRect(x0, y, x1 - x0, SLICE_H - 1);
    ctx.strokeRect(x0 - 1, y - 0.5, x1 - x0 + 2, SLICE_H);
  }
  ctx.restore();
}

/** The drag-selected range: shaded outside, edged inside, over every row. */
function drawRange(ctx: CanvasRenderingContext2D, s: Scene, xOf: (ns: number) => number): void {
  if (!s.range) {
    return;
  }
  const x0 = Math.max(GUTTER_W, xOf(s.range.start));
  const x1 = Math.min(s.width, xOf(s.range.end));
  ctx.save();
  ctx.fillStyle = 'rgba(0, 0, 0, 0.12)';
  if (x0 > GUTTER_W) {
    ctx.fillRect(GUTTER_W, RULER_H, x0 - GUTTER_W, s.height - RULER_H);
  }
  if (x1 < s.width) {
    ctx.fillRect(Math.max(GUTTER_W, x1), RULER_H, s.width - Math.max(GUTTER_W, x1), s.height - RULER_H);
  }
  if (s.rangeRows) {
    // a box: the rows it holds tinted between the edges
    ctx.fillStyle = 'rgba(26, 115, 232, 0.14)';
    for (const row of s.rows) {
      if (row.track && s.rangeRows.has(row.key)) {
        const top = rowTop(row, s.scrollY);
        if (top + row.h > RULER_H && top < s.height && (row.sticky || top >= RULER_H + s.stickyH)) {
          ctx.fillRect(x0, top, Math.max(1, x1 - x0), row.h - 1);
        }
      }
    }
  }
  ctx.strokeStyle = s.colors.accent;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (const x of [x0, x1]) {
    if (x >= GUTTER_W && x <= s.width) {
      ctx.moveTo(Math.round(x) + 0.5, RULER_H);
      ctx.lineTo(Math.round(x) + 0.5, s.height);
    }
  }
  ctx.stroke();
  ctx.restore();
}

/** Markers: a dashed line through the rows and a numbered flag on the ruler. */
function drawMarkers(ctx: CanvasRenderingContext2D, s: Scene, xOf: (ns: number) => number): void {
  ctx.save();
  s.markers.forEach((m, i) => {
    const x = Math.round(xOf(m)) + 0.5;
    if (x < GUTTER_W || x > s.width) {
      return;
    }
    ctx.strokeStyle = s.colors.error;
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(x, RULER_H);
    ctx.lineTo(x, s.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = s.colors.error;
    ctx.beginPath();
    ctx.moveTo(x, 2);
    ctx.lineTo(x + 14, 2);
    ctx.lineTo(x + 10, 8);
    ctx.lineTo(x + 14, 14);
    ctx.lineTo(x, 14);
    ctx.closePath();
    ctx.fill();
    ctx.fillStyle = '#fff';
    ctx.font = '9px system-ui, sans-serif';
    ctx.fillText(String(i + 1), x + 2, 8);
  });
  ctx.restore();
}
