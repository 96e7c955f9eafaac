/**
 * The Timeline view: rank -> unit (Python, CANN, Ascend Hardware streams, AI CPU,
 * communication groups, overlap analysis, counters, memory) -> track, drawn on one canvas
 * (renderer in ../timeline/).
 *
 * Navigation contract (what another view passes to `ctx.navigate('timeline', state)`):
 *
 *   {rank?: number, start_ns?: number|string, end_ns?: number|string,
 *    select?: {kind: string, rank: number, id: number}, query?: string}
 *
 * `start_ns`/`end_ns` are ABSOLUTE profile times in ns, as the analyses return them (Ascend
 * epoch ns exceed 2^53, so pass them as strings when exact values matter).  The view zooms to
 * that window with a 10 % margin on each side, expands `rank` and scrolls to it, selects
 * `select` (details and launch arrows; with no window given it zooms to the selection) and runs
 * `query` as a search.  Inside the view every time is ns relative to the tracks answer's
 * `origin_ns` (a string, converted with BigInt).
 *
 * Never freezing: data is asked for by visible window, visible tracks and pixel width (the
 * server merges sub-pixel slices and down-samples counters keeping peaks); at most one request
 * per kind is in flight and an answer for an older view is dropped when a newer one is wanted;
 * the fetched window is 2x the visible one, so panning and small zooms redraw from memory;
 * frames are drawn in requestAnimationFrame and touch only the visible rows.
 *
 * Test hooks: the root gets `data-state="ready"` after the first paint with data, and
 * `window.profinsightTimeline` exposes the view's state (`visibleWindow()`, `tracks()`,
 * `selected()`, `frame()`, ...).
 */
import { append, clear, fmtDuration, h } from '../dom';
import {
  CounterCols,
  firstRowBelow,
  GUTTER_W,
  layout,
  rankKey,
  relative,
  Row,
  RULER_H,
  SLICE_H,
  SliceCols,
  sliceTracks,
  TrackTree,
  TRACK_PAD,
  COLLAPSE_OVER,
  LANE_CAP,
  unitKey,
  tickLabel
} from '../timeline/model';
import { draw, Flow, FrameInfo, Mark } from '../timeline/renderer';
import type { View, ViewContext } from './types';

const OVERSCAN = 2; // fetched window = 2 x visible window: pans of half a screen redraw from memory
const MIN_SPAN = 100; // ns
const KEY_ZOOM = 1.35;
const WHEEL_ZOOM = 0.0015;

interface Fetched<T> {
  start: number;
  end: number;
  pxNs: number;
  tracks: Set<string>;
  data: Map<string, T>;
}

interface Hit extends Mark {}

declare global {
  interface Window {
    profinsightTimeline?: Record<string, (...a: any[]) => any>;
  }
}

export function create(): View {
  return new TimelineView();
}

class TimelineView implements View {
  private ctx!: ViewContext;
  private root!: HTMLElement;
  private canvas!: HTMLCanvasElement;
  private g!: CanvasRenderingContext2D;
  private vscroll!: HTMLElement;
  private spacer!: HTMLElement;
  private details!: HTMLElement;
  private searchBox!: HTMLInputElement;
  private hitLabel!: HTMLElement;
  private windowLabel!: HTMLElement;
  private tree: TrackTree | null = null;
  private origin = '0';
  private rows: Row[] = [];
  private rowByKey = new Map<string, Row>();
  private collapsed = new Set<string>();
  private allLanes = new Set<string>(); // capped tracks the user opened to all their levels
  private start = 0;
  private end = 1;
  private scrollY = 0;
  private width = 800;
  private height = 400;
  private slices: Fetched<SliceCols> | null = null;
  private counters: Fetched<CounterCols> | null = null;
  private inflight = { slice: false, counter: false };
  private seq = { slice: 0, counter: 0 };
  private gaps = new Map<number, [number, number][]>();
  private selected: Mark | null = null;
  private flows: Flow[] = [];
  private hits: Hit[] = [];
  private hitTotal = 0;
  private hitIndex = -1;
  private lastQuery = '';
  private frameInfo: FrameInfo = { arrows: 0, gaps: 0, slices: 0 };
  private raf = 0;
  private ready = false;
  private visible = true;
  private drag: { x: number; y: number; start: number; end: number; scroll: number; moved: boolean } | null = null;
  private mouseX: number | null = null;
  private pendingState: Record<string, any> | undefined;
  private resizeObs: ResizeObserver | null = null;
  private onKey = (e: KeyboardEvent) => this.key(e);
  private readonly hookOwner = {};

  async mount(el: HTMLElement, ctx: ViewContext): Promise<void> {
    this.ctx = ctx;
    const t = ctx.t;
    el.classList.add('pi-pane-timeline');
    // the canvas caches the theme's colours: drop them when the host (JupyterLab) or the
    // browser switches light/dark, and repaint
    el.addEventListener('pi-theme-change', this.onTheme);
    this.scheme = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.scheme?.addEventListener('change', this.onTheme);
    this.root = h('div', { class: 'pi-tl', 'data-state': 'loading', tabindex: '0' });
    this.searchBox = h('input', {
      class: 'pi-tl-search',
      type: 'search',
      placeholder: t('ui.timeline.search'),
      'aria-label': t('ui.timeline.search')
    });
    this.hitLabel = h('span', { class: 'pi-tl-hits', 'aria-live': 'polite' });
    this.windowLabel = h('span', { class: 'pi-tl-window' });
    const btn = (cls: string, label: string, title: string, fn: () => void) =>
      h('button', { class: `pi-tl-btn ${cls}`, title, 'aria-label': title, onclick: fn }, label);
    const toolbar = h(
      'div',
      { class: 'pi-tl-toolbar' },
      this.searchBox,
      btn('pi-tl-prev', '↑', t('ui.timeline.prev'), () => this.jump(-1)),
      btn('pi-tl-next', '↓', t('ui.timeline.next'), () => this.jump(1)),
      this.hitLabel,
      h('span', { class: 'pi-spacer' }),
      btn('pi-tl-zoomin', '+', t('ui.timeline.zoom_in'), () => this.zoom(1 / KEY_ZOOM)),
      btn('pi-tl-zoomout', '−', t('ui.timeline.zoom_out'), () => this.zoom(KEY_ZOOM)),
      btn('pi-tl-reset', t('ui.timeline.reset'), t('ui.timeline.reset'), () => this.reset()),
      this.windowLabel,
      h('span', { class: 'pi-tl-help' }, t('ui.timeline.help'))
    );
    this.canvas = h('canvas', { class: 'pi-tl-canvas' });
    this.spacer = h('div', { class: 'pi-tl-spacer' });
    this.vscroll = h('div', { class: 'pi-tl-vscroll' }, this.spacer);
    const stage = h('div', { class: 'pi-tl-stage' }, this.canvas, this.vscroll);
    this.details = h('aside', { class: 'pi-tl-details', hidden: true });
    append(this.root, [toolbar, h('div', { class: 'pi-tl-main' }, stage, this.details)]);
    el.appendChild(this.root);
    this.g = this.canvas.getContext('2d')!;

    this.searchBox.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void this.search(this.searchBox.value, e.shiftKey ? -1 : 1);
      } else if (e.key === 'Escape') {
        this.searchBox.blur();
      }
    });
    this.vscroll.addEventListener('scroll', () => {
      this.scrollY = this.vscroll.scrollTop;
      this.changed();
    });
    this.canvas.addEventListener('wheel', e => this.wheel(e), { passive: false });
    this.canvas.addEventListener('mousedown', e => this.down(e));
    window.addEventListener('mousemove', this.move);
    window.addEventListener('mouseup', this.up);
    this.canvas.addEventListener('mouseleave', () => (this.mouseX = null));
    document.addEventListener('keydown', this.onKey);
    this.resizeObs = new ResizeObserver(() => this.resize());
    this.resizeObs.observe(stage);

    const tree: TrackTree = await ctx.api.timeline(ctx.profile.id, 'tracks');
    this.tree = tree;
    this.origin = tree.origin_ns;
    for (const r of tree.ranks) {
      if (r !== tree.ranks[0]) {
        this.collapsed.add(rankKey(r.rank));
      }
      for (const u of r.units) {
        if (u.tracks.length > COLLAPSE_OVER) {
          this.collapsed.add(unitKey(r.rank, u.name));
        }
      }
    }
    this.start = tree.start_ns;
    this.end = Math.max(tree.end_ns, tree.start_ns + MIN_SPAN);
    this.relayout();
    this.resize();
    this.expose();
    if (this.pendingState) {
      const st = this.pendingState;
      this.pendingState = undefined;
      this.apply(st);
    }
    this.changed();
  }

  show(state?: Record<string, any>): void {
    this.visible = true;
    this.expose();
    if (!state) {
      this.changed();
      return;
    }
    if (!this.tree) {
      this.pendingState = state;
      return;
    }
    this.apply(state);
  }

  hide(): void {
    this.visible = false;
  }

  private scheme: MediaQueryList | null = null;
  /** JupyterLab announces a theme before its CSS variables are in place: read the colours
   * again a few times while they settle. */
  private readonly onTheme = () => {
    for (const ms of [0, 150, 500, 1500]) {
      setTimeout(() => {
        this.colors = null;
        this.schedule();
      }, ms);
    }
  };

  dispose(): void {
    this.scheme?.removeEventListener('change', this.onTheme);
    document.removeEventListener('keydown', this.onKey);
    window.removeEventListener('mousemove', this.move);
    window.removeEventListener('mouseup', this.up);
    this.resizeObs?.disconnect();
    cancelAnimationFrame(this.raf);
    if (window.profinsightTimeline && window.profinsightTimeline.__owner() === this.hookOwner) {
      delete window.profinsightTimeline;
    }
  }

  // --- navigation ---------------------------------------------------------------------------
  private apply(state: Record<string, any>): void {
    if (typeof state.rank === 'number') {
      this.collapsed.delete(rankKey(state.rank));
      this.relayout();
      const row = this.rowByKey.get(rankKey(state.rank));
      if (row) {
        this.scrollTo(row.y);
      }
    }
    if (state.start_ns !== undefined && state.end_ns !== undefined) {
      const a = relative(state.start_ns, this.origin);
      const b = relative(state.end_ns, this.origin);
      this.setWindow(a, Math.max(b, a + MIN_SPAN), 0.1);
    }
    if (state.select && state.select.kind) {
      void this.selectById(state.select.kind, Number(state.select.rank ?? 0), Number(state.select.id),
        state.start_ns === undefined);
    }
    if (typeof state.query === 'string' && state.query.trim()) {
      this.searchBox.value = state.query;
      void this.search(state.query, 1);
    }
    this.changed();
  }

  private setWindow(a: number, b: number, margin = 0): void {
    const m = (b - a) * margin;
    this.start = a - m;
    this.end = b + m;
    this.clampWindow();
    this.changed();
  }

  private clampWindow(): void {
    if (!this.tree) {
      return;
    }
    let span = Math.max(MIN_SPAN, this.end - this.start);
    const full = Math.max(MIN_SPAN, this.tree.end_ns - this.tree.start_ns);
    span = Math.min(span, full * 1.2);
    const lo = this.tree.start_ns - full * 0.1;
    const hi = this.tree.end_ns + full * 0.1;
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

  private reset(): void {
    if (this.tree) {
      this.setWindow(this.tree.start_ns, Math.max(this.tree.end_ns, this.tree.start_ns + MIN_SPAN));
    }
  }

  private zoom(factor: number, anchorPx?: number): void {
    const plotW = Math.max(1, this.width - GUTTER_W);
    const frac = anchorPx === undefined ? 0.5 : Math.min(1, Math.max(0, (anchorPx - GUTTER_W) / plotW));
    const at = this.start + (this.end - this.start) * frac;
    const span = Math.max(MIN_SPAN, (this.end - this.start) * factor);
    this.start = at - span * frac;
    this.end = this.start + span;
    this.clampWindow();
    this.changed();
  }

  private pan(frac: number): void {
    const d = (this.end - this.start) * frac;
    this.start += d;
    this.end += d;
    this.clampWindow();
    this.changed();
  }

  private scrollTo(y: number): void {
    const max = Math.max(0, this.totalHeight() - (this.height - RULER_H));
    this.scrollY = Math.max(0, Math.min(max, y));
    this.vscroll.scrollTop = this.scrollY;
  }

  /**
   * Makes `track`'s row visible: expands its rank and unit, opens all its levels when `depth` is
   * below the lane cap, scrolls it into view.
   */
  private reveal(track: string, rank: number, depth = 0): void {
    const tr = this.findTrack(track);
    let changed = this.collapsed.delete(rankKey(rank));
    if (tr) {
      changed = this.collapsed.delete(unitKey(rank, tr.unit)) || changed;
    }
    if (depth >= LANE_CAP && !this.allLanes.has(track)) {
      this.allLanes.add(track); // only capped tracks consult this set
      changed = true;
    }
    if (changed) {
      this.relayout();
    }
    const row = this.rowByKey.get(track);
    if (row) {
      const viewH = this.height - RULER_H;
      if (row.y < this.scrollY || row.y + Math.min(row.h, viewH) > this.scrollY + viewH) {
        this.scrollTo(row.y - viewH / 3);
      }
    }
  }

  private findTrack(id: string): { unit: string } | null {
    for (const r of this.tree?.ranks || []) {
      for (const u of r.units) {
        if (u.tracks.some(t => t.id === id)) {
          return { unit: u.name };
        }
      }
    }
    return null;
  }

  // --- layout and fetching ------------------------------------------------------------------
  private relayout(): void {
    if (!this.tree) {
      return;
    }
    this.rows = layout(this.tree, this.collapsed, this.ctx.t, this.allLanes);
    this.rowByKey = new Map(this.rows.map(r => [r.key, r]));
    this.spacer.style.height = `${this.totalHeight() + RULER_H}px`;
    this.changed();
  }

  private totalHeight(): number {
    const last = this.rows[this.rows.length - 1];
    return last ? last.y + last.h : 0;
  }

  private resize(): void {
    const stage = this.canvas.parentElement!;
    const w = Math.max(200, stage.clientWidth);
    const hgt = Math.max(120, stage.clientHeight);
    if (w === this.width && hgt === this.height && this.canvas.width) {
      return;
    }
    this.width = w;
    this.height = hgt;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(hgt * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${hgt}px`;
    this.g.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.changed();
  }

  /** Track ids of the rows in (and one screen around) the vertical viewport, by kind. */
  private visibleTracks(): { slice: string[]; counter: string[] } {
    const out = { slice: [] as string[], counter: [] as string[] };
    const viewH = this.height - RULER_H;
    const top = Math.max(0, this.scrollY - viewH);
    const bottom = this.scrollY + 2 * viewH;
    for (let i = firstRowBelow(this.rows, top); i < this.rows.length && this.rows[i].y < bottom; i++) {
      const tr = this.rows[i].track;
      if (tr) {
        out[tr.kind].push(tr.id);
      }
    }
    return out;
  }

  private changed(): void {
    this.windowLabel.textContent = this.ctx
      ? this.ctx.t('ui.timeline.window', { span: tickLabel(this.end - this.start, (this.end - this.start) / 100) })
      : '';
    this.maybeFetch();
    this.schedule();
  }

  private schedule(): void {
    if (!this.raf) {
      this.raf = requestAnimationFrame(() => {
        this.raf = 0;
        this.paint();
      });
    }
  }

  private maybeFetch(): void {
    if (!this.tree || !this.ctx) {
      return;
    }
    const vis = this.visibleTracks();
    void this.fetchKind('slice', vis.slice);
    void this.fetchKind('counter', vis.counter);
  }

  private covers(f: Fetched<unknown> | null, ids: string[], pxNs: number): boolean {
    if (!f) {
      return false;
    }
    return (
      this.start >= f.start &&
      this.end <= f.end &&
      pxNs >= f.pxNs * 0.6 &&
      pxNs <= f.pxNs * 1.7 &&
      ids.every(id => f.tracks.has(id))
    );
  }

  private async fetchKind(kind: 'slice' | 'counter', ids: string[]): Promise<void> {
    const plotW = Math.max(1, this.width - GUTTER_W);
    const pxNs = (this.end - this.start) / plotW;
    const have: Fetched<unknown> | null = kind === 'slice' ? this.slices : this.counters;
    if (!ids.length) {
      if (kind === 'slice' && !this.slices) {
        this.slices = { start: this.start, end: this.end, pxNs, tracks: new Set(), data: new Map() };
      }
      return;
    }
    if (this.covers(have, ids, pxNs) || this.inflight[kind]) {
      return; // an answer in flight re-checks on arrival
    }
    const span = this.end - this.start;
    const start = Math.floor(this.start - span * ((OVERSCAN - 1) / 2));
    const end = Math.ceil(this.end + span * ((OVERSCAN - 1) / 2)) + 1;
    const width = Math.min(20000, Math.max(1, Math.round(plotW * OVERSCAN)));
    const seq = ++this.seq[kind];
    this.inflight[kind] = true;
    try {
      const r = await this.ctx.api.timeline(this.ctx.profile.id, kind === 'slice' ? 'slices' : 'counters', {
        start,
        end,
        width,
        tracks: ids
      });
      if (seq !== this.seq[kind]) {
        return; // superseded
      }
      const data = kind === 'slice' ? sliceTracks(r) : new Map(Object.entries(r.tracks || {}));
      const f = { start, end, pxNs: (end - start) / width, tracks: new Set(ids), data };
      if (kind === 'slice') {
        this.slices = f as Fetched<SliceCols>;
      } else {
        this.counters = f as Fetched<CounterCols>;
      }
    } catch (e) {
      this.status(e instanceof Error ? e.message : String(e));
    } finally {
      this.inflight[kind] = false;
    }
    this.schedule();
    this.maybeFetch(); // the view may have moved while this answer was on its way
  }

  private async loadGaps(): Promise<void> {
    try {
      const r = await this.ctx.api.analysis(this.ctx.profile.id, 'idle_gaps', {});
      const gaps = new Map<number, [number, number][]>();
      for (const row of r.rows) {
        if (row.start_ns === null || row.end_ns === null) {
          continue;
        }
        const list = gaps.get(Number(row.rank ?? 0)) || [];
        list.push([relative(row.start_ns, this.origin), relative(row.end_ns, this.origin)]);
        gaps.set(Number(row.rank ?? 0), list);
      }
      this.gaps = gaps;
      this.schedule();
    } catch {
      /* a profile without device data has no gaps to mark */
    }
  }

  // --- drawing ------------------------------------------------------------------------------
  private cssColor(name: string, fallback: string): string {
    const v = getComputedStyle(this.root).getPropertyValue(name).trim();
    return v || fallback;
  }

  private colors: any = null;

  private paint(): void {
    if (!this.tree || !this.visible || this.root.offsetParent === null) {
      return;
    }
    if (!this.colors) {
      this.colors = {
        fg: this.cssColor('--pi-fg', '#1b1b1f'),
        fg2: this.cssColor('--pi-fg2', '#5f6368'),
        bg: this.cssColor('--pi-bg', '#ffffff'),
        bg2: this.cssColor('--pi-bg2', '#f7f7f8'),
        border: this.cssColor('--pi-border', '#d0d0d5'),
        accent: this.cssColor('--pi-accent', '#1a73e8'),
        error: this.cssColor('--pi-error', '#c5221f')
      };
    }
    this.frameInfo = draw(this.g, {
      width: this.width,
      height: this.height,
      rows: this.rows,
      scrollY: this.scrollY,
      start: this.start,
      end: this.end,
      slices: this.slices ? this.slices.data : new Map(),
      counters: this.counters ? this.counters.data : new Map(),
      gaps: this.gaps,
      selected: this.selected,
      flows: this.flows,
      rowOf: (track, rank) => this.rowOf(track, rank),
      t: this.ctx.t,
      colors: this.colors
    });
    if (!this.ready && this.slices) {
      this.ready = true;
      this.root.setAttribute('data-state', 'ready');
      // idle gaps come from an analysis that can take seconds on a fresh server; the server
      // runs engine calls one at a time, so asking for it only now keeps it off the first paint
      void this.loadGaps();
    }
  }

  /** The row a track is drawn in: its own, else its collapsed unit's or rank's header. */
  private rowOf(track: string, rank: number): Row | null {
    const own = this.rowByKey.get(track);
    if (own) {
      return own;
    }
    const tr = this.findTrack(track);
    if (tr) {
      const u = this.rowByKey.get(unitKey(rank, tr.unit));
      if (u) {
        return u;
      }
    }
    return this.rowByKey.get(rankKey(rank)) || null;
  }

  // --- input --------------------------------------------------------------------------------
  private wheel(e: WheelEvent): void {
    e.preventDefault();
    const x = e.offsetX;
    if (x < GUTTER_W || e.shiftKey) {
      if (e.shiftKey && x >= GUTTER_W) {
        this.pan((e.deltaY || e.deltaX) / Math.max(1, this.width - GUTTER_W));
      } else {
        this.scrollTo(this.scrollY + e.deltaY);
        this.changed();
      }
      return;
    }
    const dy = e.deltaMode === 1 ? e.deltaY * 30 : e.deltaY;
    this.zoom(Math.exp(dy * WHEEL_ZOOM), x);
  }

  private down(e: MouseEvent): void {
    if (e.button !== 0) {
      return;
    }
    this.root.focus({ preventScroll: true });
    this.drag = { x: e.clientX, y: e.clientY, start: this.start, end: this.end, scroll: this.scrollY, moved: false };
  }

  private move = (e: MouseEvent): void => {
    const rect = this.canvas.getBoundingClientRect();
    this.mouseX = e.clientX - rect.left;
    if (!this.drag) {
      return;
    }
    const dx = e.clientX - this.drag.x;
    const dy = e.clientY - this.drag.y;
    if (!this.drag.moved && Math.abs(dx) + Math.abs(dy) < 4) {
      return;
    }
    this.drag.moved = true;
    const pxNs = (this.drag.end - this.drag.start) / Math.max(1, this.width - GUTTER_W);
    this.start = this.drag.start - dx * pxNs;
    this.end = this.drag.end - dx * pxNs;
    this.clampWindow();
    this.scrollTo(this.drag.scroll - dy);
    this.changed();
  };

  private up = (e: MouseEvent): void => {
    const d = this.drag;
    this.drag = null;
    if (!d || d.moved) {
      return;
    }
    const rect = this.canvas.getBoundingClientRect();
    this.click(e.clientX - rect.left, e.clientY - rect.top);
  };

  private click(x: number, y: number): void {
    if (y < RULER_H || !this.tree) {
      return;
    }
    const cy = y - RULER_H + this.scrollY;
    const i = firstRowBelow(this.rows, cy);
    const row = this.rows[i];
    if (!row || row.y > cy) {
      return;
    }
    if (row.kind !== 'track') {
      this.toggle(row.key); // a rank or unit header: collapse / expand
      return;
    }
    if (x < GUTTER_W && row.capped) {
      this.toggleLanes(row.key); // the gutter of a capped track: "show all N levels" / "show 8"
      return;
    }
    if (x < GUTTER_W || !row.track || row.track.kind !== 'slice') {
      return;
    }
    const d = this.slices?.data.get(row.key);
    if (!d) {
      return;
    }
    const depth = Math.floor((cy - row.y - TRACK_PAD) / SLICE_H);
    if (depth >= (row.lanes ?? Infinity)) {
      return;
    }
    const pxNs = (this.end - this.start) / Math.max(1, this.width - GUTTER_W);
    const t = this.start + (x - GUTTER_W) * pxNs;
    let best = -1;
    for (let j = 0; j < d.start_ns.length; j++) {
      if (d.depth[j] !== depth) {
        continue;
      }
      const a = d.start_ns[j];
      const b = a + Math.max(d.dur_ns[j], pxNs); // thin slices get one pixel
      if (t >= a - pxNs && t <= b) {
        if (best < 0 || Math.abs(a - t) < Math.abs(d.start_ns[best] - t) || (t >= a && t <= b && !(t >= d.start_ns[best] && t <= d.start_ns[best] + d.dur_ns[best]))) {
          best = j;
        }
        if (t >= a && t <= a + d.dur_ns[j]) {
          best = j;
          break;
        }
      }
    }
    if (best < 0) {
      this.clearSelection();
      return;
    }
    if (d.merged[best] === 1 || d.id[best] < 0 || !d.source) {
      // a merged bucket: zoom in on it until its slices come apart
      this.setWindow(d.start_ns[best], d.start_ns[best] + Math.max(d.dur_ns[best], MIN_SPAN), 0.25);
      return;
    }
    const mark: Mark = {
      track: row.key,
      kind: d.source,
      rank: row.rank,
      id: d.id[best],
      name: d.names[d.name[best]],
      start_ns: d.start_ns[best],
      dur_ns: d.dur_ns[best],
      depth: d.depth[best]
    };
    void this.select(mark);
  }

  toggle(key: string): void {
    if (this.collapsed.has(key)) {
      this.collapsed.delete(key);
    } else {
      this.collapsed.add(key);
    }
    this.relayout();
    this.scrollTo(this.scrollY);
  }

  /** Shows all nesting levels of a capped track, or only the first LANE_CAP again. */
  toggleLanes(key: string): void {
    if (!this.allLanes.delete(key)) {
      this.allLanes.add(key);
    }
    this.relayout();
    this.scrollTo(this.scrollY);
  }

  private key(e: KeyboardEvent): void {
    if (!this.visible || !this.tree || this.root.offsetParent === null) {
      return;
    }
    const tgt = e.target as HTMLElement | null;
    if (tgt && (tgt.tagName === 'INPUT' || tgt.tagName === 'SELECT' || tgt.tagName === 'TEXTAREA')) {
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) {
      return;
    }
    const anchor = this.mouseX !== null && this.mouseX >= GUTTER_W ? this.mouseX : undefined;
    switch (e.key.toLowerCase()) {
      case 'w':
        this.zoom(1 / KEY_ZOOM, anchor);
        break;
      case 's':
        this.zoom(KEY_ZOOM, anchor);
        break;
      case 'a':
        this.pan(-0.2);
        break;
      case 'd':
        this.pan(0.2);
        break;
      case 'escape':
        this.clearSelection();
        break;
      default:
        return;
    }
    e.preventDefault();
  }

  // --- selection, flows, details -------------------------------------------------------------
  private clearSelection(): void {
    this.selected = null;
    this.flows = [];
    this.details.hidden = true;
    clear(this.details);
    this.schedule();
  }

  private async selectById(kind: string, rank: number, id: number, zoomTo: boolean): Promise<void> {
    try {
      const f = await this.ctx.api.timeline(this.ctx.profile.id, 'flows', { kind, rank, id });
      const me: Mark = f.selection;
      if (zoomTo) {
        this.zoomToMark(me);
      }
      await this.select(me, f.flows);
    } catch (e) {
      this.status(e instanceof Error ? e.message : String(e));
    }
  }

  private zoomToMark(m: Mark): void {
    const span = Math.max(m.dur_ns * 3, 20_000);
    const mid = m.start_ns + m.dur_ns / 2;
    this.setWindow(mid - span / 2, mid + span / 2);
  }

  private async select(m: Mark, flows?: Flow[]): Promise<void> {
    this.selected = m;
    this.flows = [];
    this.reveal(m.track, m.rank, m.depth);
    this.schedule();
    const api = this.ctx.api;
    const pid = this.ctx.profile.id;
    const [det, fl] = await Promise.all([
      api.timeline(pid, 'details', { kind: m.kind, rank: m.rank, id: m.id }).catch(e => ({ error: e })),
      flows ? Promise.resolve({ flows }) : api.timeline(pid, 'flows', { kind: m.kind, rank: m.rank, id: m.id }).catch(() => ({ flows: [] }))
    ]);
    if (this.selected !== m) {
      return; // another selection came first
    }
    this.flows = fl.flows || [];
    this.renderDetails(m, det);
    this.schedule();
  }

  private renderDetails(m: Mark, det: any): void {
    const t = this.ctx.t;
    clear(this.details);
    this.details.hidden = false;
    const facts = h('dl', { class: 'pi-tl-facts' });
    const fact = (k: string, v: string) => append(facts, [h('dt', {}, k), h('dd', {}, v)]);
    const track = this.rowOf(m.track, m.rank);
    fact(t('ui.timeline.d.track'), `${t('ui.timeline.rank', { rank: m.rank })} · ${track?.unit?.name ?? ''} · ${track?.label ?? m.track}`);
    fact(t('ui.timeline.d.start'), fmtDuration(m.start_ns));
    fact(t('ui.timeline.d.duration'), fmtDuration(m.dur_ns));
    fact(t('ui.timeline.d.end'), fmtDuration(m.start_ns + m.dur_ns));
    fact(t('ui.timeline.d.kind'), `${m.kind} #${m.id}`);
    const args = h('dl', { class: 'pi-tl-facts pi-tl-args' });
    const row = det && det.row ? det.row : {};
    const skip = new Set(['name', 'rank', 'start_ns', 'dur_ns']);
    for (const [k, v] of Object.entries(row)) {
      if (skip.has(k) || v === null || v === undefined || v === '') {
        continue;
      }
      const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
      append(args, [h('dt', {}, k), h('dd', { class: k === 'call_stack' || k === 'stack' ? 'pi-tl-stack' : '' }, text)]);
    }
    const flowList = h('ul', { class: 'pi-tl-flows' });
    for (const f of this.flows) {
      const other = f.from.kind === m.kind && f.from.id === m.id ? f.to : f.from;
      flowList.appendChild(
        h(
          'li',
          {},
          h(
            'button',
            { class: 'pi-tl-flow', onclick: () => { this.zoomToMark(other); void this.select(other); } },
            `${f.from === other ? '←' : '→'} ${other.name}`
          ),
          ` ${fmtDuration(other.dur_ns)}`
        )
      );
    }
    append(this.details, [
      h('div', { class: 'pi-tl-details-head' },
        h('span', { class: 'pi-tl-details-title' }, m.name),
        h('button', { class: 'pi-tl-close', title: t('ui.timeline.close'), 'aria-label': t('ui.timeline.close'), onclick: () => this.clearSelection() }, '×')),
      facts,
      this.flows.length ? h('div', { class: 'pi-tl-sub' }, t('ui.timeline.d.flows', { n: this.flows.length })) : null,
      this.flows.length ? flowList : null,
      det && det.error ? h('div', { class: 'pi-error-message' }, String(det.error.message || det.error)) : null,
      args.childNodes.length ? h('div', { class: 'pi-tl-sub' }, t('ui.timeline.d.args')) : null,
      args
    ]);
  }

  // --- search -------------------------------------------------------------------------------
  private async search(q: string, dir: number): Promise<void> {
    q = q.trim();
    if (!q) {
      this.hits = [];
      this.hitTotal = 0;
      this.hitIndex = -1;
      this.hitLabel.textContent = '';
      return;
    }
    if (q !== this.lastQuery) {
      this.lastQuery = q;
      this.hitLabel.textContent = this.ctx.t('ui.timeline.searching');
      try {
        const r = await this.ctx.api.timeline(this.ctx.profile.id, 'search', { q, limit: 1000 });
        if (q !== this.lastQuery) {
          return;
        }
        this.hits = r.hits;
        this.hitTotal = r.total;
        this.hitIndex = -1;
      } catch (e) {
        this.hitLabel.textContent = e instanceof Error ? e.message : String(e);
        this.lastQuery = '';
        return;
      }
    }
    this.jump(dir);
  }

  private jump(dir: number): void {
    if (!this.hits.length) {
      this.hitLabel.textContent = this.lastQuery ? this.ctx.t('ui.timeline.no_hits') : '';
      return;
    }
    this.hitIndex = (this.hitIndex + dir + this.hits.length) % this.hits.length;
    const hit = this.hits[this.hitIndex];
    this.hitLabel.textContent = this.ctx.t('ui.timeline.hits', {
      i: this.hitIndex + 1,
      n: this.hitTotal,
      shown: this.hits.length
    });
    this.zoomToMark(hit);
    void this.select({ ...hit });
  }

  private status(msg: string): void {
    this.hitLabel.textContent = msg;
  }

  // --- test hooks ---------------------------------------------------------------------------
  private expose(): void {
    const self = this;
    const owner = this.hookOwner;
    window.profinsightTimeline = {
      __owner: () => owner,
      origin: () => self.origin,
      /** the viewer's navigate, as another view calls it */
      navigate: (view: string, state?: Record<string, any>) => self.ctx.navigate(view, state),
      visibleWindow: () => ({ start_ns: self.start, end_ns: self.end }),
      setWindow: (a: number, b: number) => self.setWindow(a, b),
      tracks: () =>
        self.rows.map(r => ({
          key: r.key,
          kind: r.kind,
          label: r.label,
          rank: r.rank,
          unit: r.unit ? r.unit.name : null,
          collapsed: !!r.collapsed,
          lanes: r.lanes ?? null,
          depth: r.track ? r.track.depth : null,
          capped: !!r.capped,
          y: r.y + RULER_H - self.scrollY,
          h: r.h
        })),
      toggle: (key: string) => self.toggle(key),
      toggleLanes: (key: string) => self.toggleLanes(key),
      selected: () => (self.selected ? { ...self.selected } : null),
      flows: () => self.flows.length,
      frame: () => ({ ...self.frameInfo }),
      hits: () => ({ total: self.hitTotal, index: self.hitIndex, shown: self.hits.length }),
      gaps: () => Array.from(self.gaps.values()).reduce((n, g) => n + g.length, 0),
      /** canvas x (css px) of a relative time */
      xOf: (ns: number) => GUTTER_W + ((ns - self.start) / (self.end - self.start)) * (self.width - GUTTER_W),
      /** y (css px) of the middle of `depth` in a track's row, or null when not laid out */
      yOf: (track: string, depth = 0) => {
        const r = self.rowByKey.get(track);
        return r ? RULER_H + r.y - self.scrollY + TRACK_PAD + depth * SLICE_H + SLICE_H / 2 : null;
      },
      slices: (track: string) => self.slices?.data.get(track) || null,
      idle: () => !self.inflight.slice && !self.inflight.counter && self.raf === 0
    };
  }
}
