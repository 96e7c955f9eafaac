/**
 * The Timeline view: rank -> unit (Python, CANN, Ascend Hardware streams, AI CPU,
 * communication groups, overlap analysis, counters, memory) -> track, drawn on one canvas
 * (the pieces live in ../timeline/: `data` asks the server, `viewport` holds the window and the
 * mouse/keyboard bindings, `details` draws the selection's panel, `search` steps through name
 * hits, `model` lays out the rows, `renderer` draws a frame).  This module wires them together and keeps the view's state.
 *
 * Navigation contract (what another view passes to `ctx.navigate('timeline', state)`):
 *
 *   {rank?: number, start_ns?: number|string, end_ns?: number|string,
 *    select?: {kind: string, rank: number, id: number}, query?: string,
 *    ranks?: number[], align?: AlignSpec, skew?: {rank: ns}, range?: {start_ns, end_ns, tracks?}}
 *
 * `start_ns`/`end_ns` are ABSOLUTE profile times in ns, as the analyses return them (Ascend
 * epoch ns exceed 2^53, so pass them as strings when exact values matter).  The view zooms to
 * that window with a 10 % margin on each side, expands `rank` and scrolls to it, selects
 * `select` (details and launch arrows; with no window given it zooms to the selection) and runs
 * `query` as a search.  Inside the view every time is ns relative to the tracks answer's
 * `origin_ns` (a string, converted with BigInt).  `ranks` picks the ranks shown side by side and `align`
 * lines them up with offsets the server computes (`timeline/align`), `skew` adding the user's own;
 * the window routes then answer in that shifted frame (`shift`), so drawing, hit tests and ranges
 * need no arithmetic, and the single-slice answers (flows, search) are shifted in ../timeline/data.ts.
 *
 * Never freezing: data is asked for by visible window, visible tracks and pixel width (the
 * server merges sub-pixel slices and down-samples counters keeping peaks); at most one request
 * per kind is in flight and an answer for an older view is dropped when a newer one is wanted;
 * the fetched window is 2x the visible one, so panning and small zooms redraw from memory
 * (../timeline/data.ts); frames are drawn in requestAnimationFrame and touch only the visible
 * rows.
 *
 * Test hooks: the root gets `data-state="ready"` after the first paint with data, and
 * `window.profinsightTimeline` exposes the view's state (`visibleWindow()`, `tracks()`,
 * `selected()`, `frame()`, ...).
 */
import { append, h } from '../dom';
import { TimelineData } from '../timeline/data';
import { hideDetails, renderDetails } from '../timeline/details';
import {
  COLLAPSE_OVER,
  firstRowBelow,
  GUTTER_W,
  LANE_CAP,
  passes,
  layout,
  rankKey,
  relative,
  Row,
  rowTop,
  RULER_H,
  SLICE_H,
  SliceCols,
  stickPinned,
  tickLabel,
  TRACK_PAD,
  TrackTree,
  unitKey
} from '../timeline/model';
import { draw, Flow, FrameInfo, Mark, Scene } from '../timeline/renderer';
import { TimelineSearch } from '../timeline/search';
import { bindInput, hitTest, KEY_ZOOM, MIN_SPAN, Viewport } from '../timeline/viewport';
import type { AlignAnswer, StatsAnswer } from '../generated/wire';
import type { AlignSpec } from '../link';
import { renderRankPanel } from './timeline_ranks';
import { renderMarkers, renderRange, Tooltip } from './timeline_tools';
import type { View, ViewContext, ViewState } from './types';
import { summaryTimeline } from './ranks_open';

/** `window.profinsightTimeline`: the view's state as the UI tests read it. */
export interface TimelineHooks {
  __owner(): object;
  origin(): string;
  /** the viewer's navigate, as another view calls it */
  navigate(view: string, state?: ViewState): void;
  visibleWindow(): { start_ns: number; end_ns: number };
  setWindow(a: number, b: number): void;
  tracks(): {
    key: string;
    kind: Row['kind'];
    label: string;
    rank: number;
    unit: string | null;
    collapsed: boolean;
    lanes: number | null;
    depth: number | null;
    capped: boolean;
    /** canvas y of the row's top (css px; pinned rows that stick ignore the scroll) */
    y: number;
    h: number;
    sticky: boolean;
  }[];
  toggle(key: string): void;
  toggleLanes(key: string): void;
  selected(): Mark | null;
  flows(): number;
  frame(): FrameInfo;
  hits(): { total: number; index: number; shown: number };
  gaps(): number;
  /** canvas x (css px) of a relative time */
  xOf(ns: number): number;
  /** y (css px) of the middle of `depth` in a track's row, or null when not laid out */
  yOf(track: string, depth?: number): number | null;
  slices(track: string): SliceCols | null;
  idle(): boolean;
  /** the drag-selected range (relative ns) and its statistics once they arrived */
  /** the range; `tracks` the slice tracks of a box dragged over rows (null: every shown track) */
  range(): { start_ns: number; end_ns: number; tracks: string[] | null } | null;
  setRange(a: number, b: number, tracks?: string[] | null): void;
  stats(): StatsAnswer | null;
  tooltip(): { name: string; dur_ns: number; count: number; text: string } | null;
  markers(): number[];
  addMarker(ns: number): void;
  pin(track: string): void;
  pinned(): string[];
  setFilter(text: string): void;
  /** the gaps window in memory: how many the server counted there, how many it sent */
  gapsInfo(): { start_ns: number; end_ns: number; total: number; shown: number } | null;
  /** the ranks shown (side by side) */
  shownRanks(): number[];
  showRanks(ranks: number[]): void;
  /** lines the ranks up (null: recorded times); resolves once the offsets are applied */
  setAlign(spec: AlignSpec | null): Promise<void>;
  /** what lines the ranks up, the server's answer, and the total offset per rank (ns) */
  alignment(): { spec: AlignSpec | null; answer: AlignAnswer | null; offsets: Record<number, number>; error: string | null };
  /** sets rank `rank`'s total offset (ns): the alignment's plus the user's adjustment */
  setOffset(rank: number, ns: number): void;
  /** the anchor slices drawn highlighted on every rank (times in the shifted frame) */
  highlights(): Mark[];
}

declare global {
  interface Window {
    profinsightTimeline?: TimelineHooks;
  }
}

export function create(): View {
  // a run read from its ranks' summaries has no timeline: the panel that opens a rank in full
  let inner: View | null = null;
  return {
    mount(el: HTMLElement, ctx: ViewContext) {
      inner = ctx.profile.tier === 'summary' ? summaryTimeline() : new TimelineView();
      return inner.mount(el, ctx);
    },
    show: (state?: ViewState) => inner?.show?.(state),
    hide: () => inner?.hide?.(),
    dispose: () => inner?.dispose?.()
  };
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
  private vp!: Viewport;
  private data!: TimelineData;
  private tree: TrackTree | null = null;
  private rows: Row[] = [];
  private rowByKey = new Map<string, Row>();
  private collapsed = new Set<string>();
  private allLanes = new Set<string>(); // capped tracks the user opened to all their levels
  private selected: Mark | null = null;
  private range: { start: number; end: number } | null = null;
  private rangeStats: StatsAnswer | null = null;
  /** the slice tracks of a box dragged over rows; null: the range is over every shown track */
  private rangeTracks: string[] | null = null;
  private rangeSeq = 0;
  private markers: number[] = [];
  private pinned: string[] = [];
  private filter = '';
  // multi-rank: ranks shown side by side, what lines them up, offsets (see timeline_ranks.ts)
  private shownRanks: Set<number> | null = null; // null: every rank
  private alignSpec: AlignSpec | null = null;
  private alignAnswer: AlignAnswer | null = null;
  private alignSteps: number[] = [];
  private alignError: string | null = null;
  private skew = new Map<number, number>(); // the user's adjustment on top of the alignment, ns
  private highlights: Mark[] = [];
  private anchorNs: number | null = null;
  private rankPanel!: HTMLElement;
  private tip!: Tooltip;
  private markerBox!: HTMLElement;
  private filterBox!: HTMLInputElement;
  private flows: Flow[] = [];
  private search!: TimelineSearch;
  private frameInfo: FrameInfo = { arrows: 0, gaps: 0, slices: 0 };
  private raf = 0;
  private ready = false;
  private visible = true;
  private pendingState: ViewState | undefined;
  private resizeObs: ResizeObserver | null = null;
  private unbind: (() => void) | null = null;
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
    this.filterBox = h('input', {
      class: 'pi-tl-filter',
      type: 'search',
      placeholder: t('ui.timeline.filter'),
      'aria-label': t('ui.timeline.filter'),
      title: t('ui.timeline.filter.help')
    });
    this.filterBox.addEventListener('input', () => this.setFilter(this.filterBox.value));
    this.markerBox = h('span', { class: 'pi-tl-markers', hidden: true });
    this.rankPanel = h('div', { class: 'pi-tl-ranks', hidden: true });
    const ranksBtn = h(
      'button',
      {
        class: 'pi-tl-btn pi-tl-ranks-btn',
        hidden: true,
        title: t('ui.timeline.ranks.help'),
        onclick: () => {
          this.rankPanel.hidden = !this.rankPanel.hidden;
          if (!this.rankPanel.hidden) {
            this.renderRanks();
            if (!this.alignSteps.length) {
              void this.loadSteps();
            }
          }
        }
      },
      t('ui.timeline.ranks.button')
    );
    this.tip = new Tooltip(t);
    this.canvas = h('canvas', { class: 'pi-tl-canvas' });
    this.spacer = h('div', { class: 'pi-tl-spacer' });
    this.vscroll = h('div', { class: 'pi-tl-vscroll' }, this.spacer);
    this.vp = new Viewport(this.vscroll, () => this.changed());
    this.data = new TimelineData(
      ctx.api,
      ctx.profile.id,
      () => {
        this.schedule();
        this.maybeFetch(); // the view may have moved while this answer was on its way
      },
      msg => this.status(msg)
    );
    this.search = new TimelineSearch(this.data, this.hitLabel, t, hit => {
      this.zoomToMark(hit);
      void this.select({ ...hit });
    });
    const vp = this.vp;
    const btn = (cls: string, label: string, title: string, fn: () => void) =>
      h('button', { class: `pi-tl-btn ${cls}`, title, 'aria-label': title, onclick: fn }, label);
    const toolbar = h(
      'div',
      { class: 'pi-tl-toolbar' },
      this.searchBox,
      btn('pi-tl-prev', '↑', t('ui.timeline.prev'), () => this.search.jump(-1)),
      btn('pi-tl-next', '↓', t('ui.timeline.next'), () => this.search.jump(1)),
      this.hitLabel,
      this.filterBox,
      ranksBtn,
      this.markerBox,
      h('span', { class: 'pi-spacer' }),
      btn('pi-tl-zoomin', '+', t('ui.timeline.zoom_in'), () => vp.zoom(1 / KEY_ZOOM)),
      btn('pi-tl-zoomout', '−', t('ui.timeline.zoom_out'), () => vp.zoom(KEY_ZOOM)),
      btn('pi-tl-reset', t('ui.timeline.reset'), t('ui.timeline.reset'), () => vp.reset()),
      this.windowLabel,
      h('span', { class: 'pi-tl-help' }, t('ui.timeline.help'))
    );
    const stage = h('div', { class: 'pi-tl-stage' }, this.canvas, this.vscroll, this.tip.el);
    this.details = h('aside', { class: 'pi-tl-details', hidden: true });
    append(this.root, [toolbar, this.rankPanel, h('div', { class: 'pi-tl-main' }, stage, this.details)]);
    el.appendChild(this.root);
    this.g = this.canvas.getContext('2d', { alpha: false })!; // opaque: every frame fills its background, and the compositor need not blend it

    this.searchBox.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void this.search.run(this.searchBox.value, e.shiftKey ? -1 : 1).then(() => this.schedule()); // the query goes in the link
      } else if (e.key === 'Escape') {
        this.searchBox.blur();
      }
    });
    this.vscroll.addEventListener('scroll', () => {
      vp.scrollY = this.vscroll.scrollTop;
      this.changed();
    });
    this.unbind = bindInput(this.canvas, this.root, vp, {
      active: () => this.visible && !!this.tree && this.root.offsetParent !== null,
      changed: () => this.changed(),
      click: (x, y) => this.click(x, y),
      clearSelection: () => {
        this.clearSelection();
        this.clearRange();
      },
      hover: at => this.hover(at),
      range: (a, b, done, rows) => this.setRange(a, b, done, rows ? this.tracksIn(rows.y0, rows.y1) : null),
      mark: ns => this.addMarker(ns)
    });
    this.resizeObs = new ResizeObserver(() => this.resize());
    this.resizeObs.observe(stage);

    const tree = await this.data.tracks();
    this.tree = tree;
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
    vp.setBounds(tree.start_ns, tree.end_ns);
    ranksBtn.hidden = tree.ranks.length < 2;
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

  show(state?: ViewState): void {
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
    this.unbind?.();
    this.resizeObs?.disconnect();
    cancelAnimationFrame(this.raf);
    if (window.profinsightTimeline && window.profinsightTimeline.__owner() === this.hookOwner) {
      delete window.profinsightTimeline;
    }
  }

  // --- navigation ---------------------------------------------------------------------------
  private apply(state: ViewState): void {
    if (state.ranks || state.align || state.skew) {
      // the ranks and their alignment first: a selection, a range and search hits are placed in
      // the aligned frame
      const known = new Set(this.tree!.ranks.map(r => r.rank));
      const ranks = (state.ranks || []).filter(r => known.has(r));
      if (ranks.length) {
        this.setShown(new Set(ranks)); // the ranks a link names are opened, as the panel does
      }
      const skew = new Map(Object.entries(state.skew || {}).map(([r, ns]) => [Number(r), Number(ns)] as [number, number]));
      if (state.align || state.skew) {
        this.rankPanel.hidden = false; // shifted ranks are never a silent state: the panel says by what
      }
      const done = state.align ? this.setAlign(state.align, skew) : Promise.resolve(this.setSkew(skew));
      void done.then(() => this.applyRest(state));
      return;
    }
    this.applyRest(state);
  }

  private applyRest(state: ViewState): void {
    if (typeof state.rank === 'number') {
      this.collapsed.delete(rankKey(state.rank));
      this.relayout();
      const row = this.rowByKey.get(rankKey(state.rank));
      if (row) {
        this.vp.scrollTo(row.y);
      }
    }
    if (typeof state.lanes === 'string') {
      this.setFilter(state.lanes);
    }
    if (state.pinned) {
      const known = new Set(this.tree!.ranks.flatMap(r => r.units.flatMap(u => u.tracks.map(tr => tr.id))));
      this.pinned = [...new Set(state.pinned.filter(id => known.has(id)))]; // a link's unknown ids are ignored
      this.relayout();
    }
    if (state.markers) {
      this.markers = state.markers.map(m => relative(m, this.data.origin)).sort((a, b) => a - b);
      this.showMarkers();
    }
    if (state.start_ns !== undefined && state.end_ns !== undefined) {
      const a = relative(state.start_ns, this.data.origin);
      const b = relative(state.end_ns, this.data.origin);
      this.vp.setWindow(a, Math.max(b, a + MIN_SPAN), state.exact ? 0 : 0.1);
    }
    if (state.range) {
      this.setRange(
        relative(state.range.start_ns, this.data.origin),
        relative(state.range.end_ns, this.data.origin),
        true,
        state.range.tracks ?? null
      );
    }
    if (state.select && state.select.kind) {
      void this.selectById(
        state.select.kind,
        Number(state.select.rank ?? 0),
        Number(state.select.id),
        state.start_ns === undefined
      );
    }
    if (typeof state.query === 'string' && state.query.trim()) {
      this.searchBox.value = state.query;
      if (state.start_ns !== undefined || state.select) {
        // the link's window and selection are the picture: the hits are found, not jumped to
        void this.search.restore(state.query, state.select).then(() => this.report());
      } else {
        void this.search.run(state.query, 1);
      }
    }
    this.changed();
  }

  /**
   * Makes `track`'s row visible: expands its rank and unit, opens all its levels when `depth` is
   * below the lane cap, scrolls it into view.
   */
  private reveal(track: string, rank: number, depth = 0): void {
    const tr = this.findTrack(track);
    let changed = this.collapsed.delete(rankKey(rank));
    if (this.shownRanks && !this.shownRanks.has(rank)) {
      this.shownRanks.add(rank);
      changed = true;
    }
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
    if (row && !row.sticky) {
      // the part of the rows on screen below the sticky (pinned) ones
      const viewH = this.vp.height - RULER_H;
      const top = this.vp.scrollY + this.vp.stickyH;
      if (row.y < top || row.y + Math.min(row.h, viewH - this.vp.stickyH) > this.vp.scrollY + viewH) {
        this.vp.scrollTo(row.y - this.vp.stickyH - (viewH - this.vp.stickyH) / 3);
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
    this.rows = layout(this.tree, this.collapsed, this.ctx.t, this.allLanes, {
      filter: this.filter,
      pinned: this.pinned,
      ranks: this.shownRanks ?? undefined
    });
    this.rowByKey = new Map(this.rows.map(r => [r.key, r]));
    this.vp.stickyH = stickPinned(this.rows, this.vp.height - RULER_H);
    const last = this.rows[this.rows.length - 1];
    this.vp.contentHeight = last ? last.y + last.h : 0;
    this.spacer.style.height = `${this.vp.contentHeight + RULER_H}px`;
    this.changed();
  }

  private resize(): void {
    const stage = this.canvas.parentElement!;
    const w = Math.max(200, stage.clientWidth);
    const hgt = Math.max(120, stage.clientHeight);
    if (w === this.vp.width && hgt === this.vp.height && this.canvas.width) {
      return;
    }
    this.vp.width = w;
    this.vp.height = hgt;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(hgt * dpr);
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${hgt}px`;
    this.g.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.vp.stickyH = stickPinned(this.rows, hgt - RULER_H);
    this.changed();
  }

  /** Track ids of the rows in (and one screen around) the vertical viewport, by kind, and the
   * slice tracks drawn with their levels capped. */
  private visibleTracks(): { slice: string[]; counter: string[]; capped: string[] } {
    const out = { slice: [] as string[], counter: [] as string[], capped: [] as string[] };
    const add = (r: Row) => {
      const tr = r.track;
      if (tr) {
        out[tr.kind].push(tr.id);
        if (r.capped && (r.lanes ?? tr.depth) < tr.depth) {
          out.capped.push(tr.id);
        }
      }
    };
    const viewH = this.vp.height - RULER_H;
    const top = Math.max(0, this.vp.scrollY - viewH);
    const bottom = this.vp.scrollY + 2 * viewH;
    for (let i = 0; i < this.rows.length && this.rows[i].sticky; i++) {
      add(this.rows[i]);
    }
    for (let i = firstRowBelow(this.rows, top); i < this.rows.length && this.rows[i].y < bottom; i++) {
      if (!this.rows[i].sticky) {
        add(this.rows[i]);
      }
    }
    return out;
  }

  private reportTimer = 0;

  /** Tells the host what the view shows (window, selection, range, lane filter, markers, pinned
   * tracks, search, ranks and their alignment) for its link. */
  private report(): void {
    if (!this.ctx?.setState || !this.tree || this.reportTimer) {
      return;
    }
    this.reportTimer = window.setTimeout(() => {
      this.reportTimer = 0;
      if (!this.visible) {
        return;
      }
      const abs = (ns: number) => (BigInt(this.data.origin) + BigInt(Math.round(ns))).toString();
      this.ctx.setState?.({
        start_ns: abs(this.vp.start),
        end_ns: abs(this.vp.end),
        select: this.selected ? { kind: this.selected.kind, rank: this.selected.rank, id: this.selected.id } : undefined,
        range: this.range
          ? { start_ns: abs(this.range.start), end_ns: abs(this.range.end), tracks: this.rangeTracks ?? undefined }
          : undefined,
        lanes: this.filter || undefined,
        markers: this.markers.length ? this.markers.map(abs) : undefined,
        pinned: this.pinned.length ? [...this.pinned] : undefined,
        query: this.search.query || undefined,
        ranks: this.shownRanks ? [...this.shownRanks].sort((a, b) => a - b) : undefined,
        align: this.alignSpec ?? undefined,
        skew: this.skew.size ? Object.fromEntries(this.skew) : undefined
      });
    }, 250);
  }

  private changed(): void {
    const span = this.vp.end - this.vp.start;
    this.windowLabel.textContent = this.ctx ? this.ctx.t('ui.timeline.window', { span: tickLabel(span, span / 100) }) : '';
    this.maybeFetch();
    this.schedule();
  }

  private schedule(): void {
    this.report();
    if (!this.raf) {
      this.raf = requestAnimationFrame(() => {
        this.raf = 0;
        this.paint();
      });
    }
  }

  /** set while one move of the view is made of several steps (zoomToMark): fetch at its end */
  private holdFetch = false;

  private maybeFetch(): void {
    if (!this.tree || !this.ctx || this.holdFetch) {
      return;
    }
    const vis = this.visibleTracks();
    const v = { start: this.vp.start, end: this.vp.end, plotW: this.vp.plotW };
    void this.data.want('slice', vis.slice, v, vis.capped);
    void this.data.want('counter', vis.counter, v);
    if (this.ready) {
      void this.data.wantGaps(v, () => this.schedule());
    }
  }

  // --- drawing ------------------------------------------------------------------------------
  private cssColor(name: string, fallback: string): string {
    const v = getComputedStyle(this.root).getPropertyValue(name).trim();
    return v || fallback;
  }

  private colors: Scene['colors'] | null = null;

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
    const d = this.data;
    const t0 = performance.now();
    this.frameInfo = draw(this.g, {
      width: this.vp.width,
      height: this.vp.height,
      rows: this.rows,
      scrollY: this.vp.scrollY,
      stickyH: this.vp.stickyH,
      start: this.vp.start,
      end: this.vp.end,
      slices: d.slices ? d.slices.data : new Map(),
      counters: d.counters ? d.counters.data : new Map(),
      counterSpan: d.counters ? { start: d.counters.start, end: d.counters.end } : null,
      gaps: d.gaps,
      selected: this.selected,
      flows: this.flows,
      range: this.range,
      rangeRows: this.rangeTracks ? new Set(this.rangeTracks) : null,
      markers: this.markers,
      highlights: this.highlights,
      anchor: this.anchorNs,
      rowOf: (track, rank) => this.rowOf(track, rank),
      t: this.ctx.t,
      colors: this.colors
    });
    this.frameInfo.ms = performance.now() - t0;
    if (!this.ready && d.slices) {
      this.ready = true;
      this.root.setAttribute('data-state', 'ready');
      // idle gaps come from an analysis that can take seconds on a fresh server; the server
      // runs engine calls one at a time, so asking for it only now keeps it off the first paint
      this.maybeFetch();
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

  // --- clicks and collapsing ----------------------------------------------------------------
  private click(x: number, y: number): void {
    if (!this.tree) {
      return;
    }
    const hit = hitTest(this.vp, this.rows, this.data.slices?.data, x, y);
    switch (hit.kind) {
      case 'header':
        this.toggle(hit.key);
        break;
      case 'lanes':
        this.toggleLanes(hit.key);
        break;
      case 'pin':
        this.pin(hit.key);
        break;
      case 'miss':
        this.clearSelection();
        break;
      case 'merged':
        // a merged bucket: zoom in on it until its slices come apart
        this.vp.setWindow(hit.start, hit.end, 0.25);
        break;
      case 'slice':
        void this.select(hit.mark);
        break;
    }
  }

  toggle(key: string): void {
    if (this.collapsed.has(key)) {
      this.collapsed.delete(key);
    } else {
      this.collapsed.add(key);
    }
    this.relayout();
    this.vp.scrollTo(this.vp.scrollY);
  }

  /** Shows all nesting levels of a capped track, or only the first LANE_CAP again. */
  toggleLanes(key: string): void {
    if (!this.allLanes.delete(key)) {
      this.allLanes.add(key);
    }
    this.relayout();
    this.vp.scrollTo(this.vp.scrollY);
  }

  // --- selection and flows ------------------------------------------------------------------
  private clearSelection(): void {
    this.selected = null;
    this.flows = [];
    hideDetails(this.details);
    this.schedule();
  }

  private async selectById(kind: string, rank: number, id: number, zoomTo: boolean): Promise<void> {
    try {
      const f = await this.data.flows(kind, rank, id);
      const me: Mark = f.selection;
      if (zoomTo) {
        this.zoomToMark(me);
      }
      await this.select(me, f.flows);
    } catch (e) {
      this.status(e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * Zooms to `m` with its row on screen, asking for the new window once: the zoom and the
   * scroll to the row each move the view, and fetching after the first would ask for the rows
   * or the window that is left at once (with one request per kind in flight, the right one then
   * waits for it and goes to the server behind the selection's details and flows: the first jump
   * of a search took twice as long).
   */
  private zoomToMark(m: Mark): void {
    this.holdFetch = true;
    try {
      this.reveal(m.track, m.rank, m.depth);
      this.zoomTo(m);
    } finally {
      this.holdFetch = false;
    }
    this.maybeFetch();
  }

  private zoomTo(m: Mark): void {
    const span = Math.max(m.dur_ns * 3, 20_000);
    const mid = m.start_ns + m.dur_ns / 2;
    this.vp.setWindow(mid - span / 2, mid + span / 2);
  }

  private async select(m: Mark, flows?: Flow[]): Promise<void> {
    this.selected = m;
    this.flows = [];
    this.reveal(m.track, m.rank, m.depth);
    this.schedule();
    const [det, fl] = await Promise.all([
      this.data.details(m),
      flows ? Promise.resolve({ flows }) : this.data.flows(m.kind, m.rank, m.id).catch(() => ({ flows: [] as Flow[] }))
    ]);
    if (this.selected !== m) {
      return; // another selection came first
    }
    this.flows = fl.flows || [];
    renderDetails(this.details, m, det, this.flows, {
      t: this.ctx.t,
      row: this.rowOf(m.track, m.rank),
      onFlow: other => {
        this.zoomToMark(other);
        void this.select(other);
      },
      onClose: () => this.clearSelection(),
      origin: this.data.origin,
      onAlign:
        (this.tree?.ranks.length ?? 0) > 1
          ? edge => {
              this.rankPanel.hidden = false;
              void this.setAlign({ by: 'collective', kind: m.kind, rank: m.rank, id: m.id, edge });
            }
          : undefined
    });
    this.schedule();
  }

  private status(msg: string): void {
    this.hitLabel.textContent = msg;
  }

  // --- tools: tooltip, range, markers, lane filter, pinning --------------------------------------
  private hover(at: { x: number; y: number; clientX: number; clientY: number } | null): void {
    if (!at || !this.tree || at.x < GUTTER_W) {
      this.tip.hide();
      return;
    }
    const hit = hitTest(this.vp, this.rows, this.data.slices?.data, at.x, at.y);
    const row = hit.kind === 'slice' ? this.rowOf(hit.mark.track, hit.mark.rank) : hit.kind === 'merged' ? this.rowOf(hit.track, hit.rank) : null;
    const where = row ? `${this.ctx.t('ui.timeline.rank', { rank: row.rank })} · ${row.unit?.name ?? ''} · ${row.track?.name ?? row.label}` : '';
    if (hit.kind === 'slice') {
      const shift = this.data.shift.get(hit.mark.rank) ?? 0;
      this.tip.show({ name: hit.mark.name, dur_ns: hit.mark.dur_ns, start_ns: hit.mark.start_ns, track: where, count: 1, shift }, at.clientX, at.clientY);
    } else if (hit.kind === 'merged') {
      const shift = this.data.shift.get(hit.rank) ?? 0;
      this.tip.show({ name: hit.name, dur_ns: hit.end - hit.start, start_ns: hit.start, track: where, count: hit.count, shift }, at.clientX, at.clientY);
    } else {
      this.tip.hide();
    }
  }

  /**
   * Shows [a, b) as the selected range, over `tracks` (a box dragged over rows) or every shown
   * track (null); once released, asks the server for its statistics.
   */
  setRange(a: number, b: number, done = true, tracks: string[] | null = null): void {
    if (b - a < 1) {
      return;
    }
    this.range = { start: a, end: b };
    this.rangeTracks = tracks;
    this.tip.hide();
    this.schedule();
    if (!done) {
      return;
    }
    this.rangeStats = null;
    const span = { start: a, end: b };
    const opts = {
      t: this.ctx.t,
      onClose: () => this.clearRange(),
      onZoom: () => this.vp.setWindow(span.start, span.end),
      onName: (name: string) => {
        // its first slice inside the range, then Enter steps on through every hit
        this.searchBox.value = name;
        void this.search.run(name, 1, span);
      }
    };
    renderRange(this.details, null, span, opts);
    const seq = ++this.rangeSeq;
    if (tracks && !tracks.length) {
      // a box over counters or empty rows only: no slice to count
      const none: StatsAnswer = { origin_ns: this.data.origin, start_ns: a, end_ns: b, tracks: 0, count: 0, total_ns: 0, names_total: 0, names: [] };
      this.rangeStats = none;
      renderRange(this.details, none, span, opts);
      return;
    }
    this.data
      .stats(a, b, tracks ?? this.filteredTracks())
      .then(r => {
        if (seq === this.rangeSeq) {
          this.rangeStats = r;
          renderRange(this.details, r, span, opts);
        }
      })
      .catch((e: unknown) => {
        if (seq === this.rangeSeq) {
          renderRange(this.details, { error: e instanceof Error ? e.message : String(e) }, span, opts);
        }
      });
  }

  private clearRange(): void {
    if (!this.range) {
      return;
    }
    this.range = null;
    this.rangeTracks = null;
    this.rangeStats = null;
    this.rangeSeq++;
    this.details.classList.remove('pi-tl-range-panel');
    if (!this.selected) {
      hideDetails(this.details);
    }
    this.schedule();
  }

  /**
   * The slice tracks of the rows between canvas y `y0` and `y1` (a box drag): a track row's own
   * track, and every track a collapsed rank or unit header stands for.
   */
  private tracksIn(y0: number, y1: number): string[] {
    const out = new Set<string>();
    const shown = new Set(this.filteredTracks());
    const all = shown.size === 0;
    for (const r of this.rows) {
      const top = rowTop(r, this.vp.scrollY);
      if (top + r.h <= y0 || top >= y1 || (!r.sticky && top < RULER_H + this.vp.stickyH)) {
        continue;
      }
      if (r.track) {
        if (r.track.kind === 'slice') {
          out.add(r.track.id);
        }
      } else if (r.collapsed && this.tree) {
        for (const rk of this.tree.ranks) {
          if (rk.rank !== r.rank) {
            continue;
          }
          for (const u of rk.units) {
            if (r.kind === 'unit' && u.name !== r.unit?.name) {
              continue;
            }
            for (const tr of u.tracks) {
              if (tr.kind === 'slice' && (all ? !this.shownRanks || this.shownRanks.has(rk.rank) : shown.has(tr.id))) {
                out.add(tr.id);
              }
            }
          }
        }
      }
    }
    return [...out];
  }

  /** Slice track ids the lane filter lets through (empty: no filter, every track). */
  private filteredTracks(): string[] {
    if ((!this.filter.trim() && !this.shownRanks) || !this.tree) {
      return [];
    }
    const out: string[] = [];
    for (const r of this.tree.ranks) {
      if (this.shownRanks && !this.shownRanks.has(r.rank)) {
        continue;
      }
      for (const u of r.units) {
        for (const tr of u.tracks) {
          const path = `${this.ctx.t('ui.timeline.rank', { rank: r.rank })} / ${u.name} / ${tr.name}`;
          if (tr.kind === 'slice' && (passes(path, this.filter) || this.pinned.includes(tr.id))) {
            out.push(tr.id);
          }
        }
      }
    }
    return out.length ? out : ['-'];
  }

  addMarker(ns: number): void {
    this.markers = [...this.markers, ns].sort((a, b) => a - b);
    this.showMarkers();
  }

  private showMarkers(): void {
    renderMarkers(
      this.markerBox,
      this.markers,
      this.ctx.t,
      () => {
        this.markers = [];
        this.showMarkers();
      },
      ns => {
        const half = (this.vp.end - this.vp.start) / 2;
        this.vp.setWindow(ns - half, ns + half);
      }
    );
    this.schedule();
  }

  /** Pins a track to the top group, or unpins it. */
  pin(track: string): void {
    this.pinned = this.pinned.includes(track) ? this.pinned.filter(k => k !== track) : [...this.pinned, track];
    this.relayout();
    this.vp.scrollTo(this.vp.scrollY);
  }

  setFilter(text: string): void {
    this.filter = text;
    if (this.filterBox.value !== text) {
      this.filterBox.value = text;
    }
    this.relayout();
    this.vp.scrollTo(0);
  }

  // --- ranks side by side and their alignment ------------------------------------------------
  /** Shows `ranks` (every rank when all are given); `expand` opens their headers. */
  private setShown(ranks: Set<number>, expand = true): void {
    if (!this.tree) {
      return;
    }
    const all = this.tree.ranks.every(r => ranks.has(r.rank));
    this.shownRanks = all ? null : new Set(ranks);
    if (expand) {
      for (const r of ranks) {
        this.collapsed.delete(rankKey(r));
      }
    }
    this.relayout();
    this.vp.scrollTo(this.vp.scrollY);
    if (this.alignSpec?.by === 'step' && this.alignAnswer && this.alignAnswer.reference !== this.referenceRank()) {
      void this.setAlign(this.alignSpec, this.skew); // the lowest shown rank is the reference
    } else {
      this.renderRanks();
    }
  }

  /** The rank a step alignment lines the others up on: the lowest shown. */
  private referenceRank(): number {
    const ranks = this.shownRanks ? [...this.shownRanks] : (this.tree?.ranks || []).map(r => r.rank);
    return ranks.length ? Math.min(...ranks) : 0;
  }

  /**
   * Lines the ranks up by `spec` with offsets the server computes from the data; `skew` is the
   * user's adjustment on top (a new alignment starts without one).
   */
  async setAlign(spec: AlignSpec | null, skew: Map<number, number> = new Map()): Promise<void> {
    this.alignSpec = spec;
    this.alignError = null;
    if (!spec) {
      this.alignAnswer = null;
    } else {
      if (spec.by === 'collective' && this.shownRanks && !this.shownRanks.has(spec.rank)) {
        this.shownRanks.add(spec.rank);
        this.relayout();
      }
      const p: Record<string, string | number> =
        spec.by === 'step'
          ? { by: 'step', step: spec.step, ref: this.referenceRank() }
          : { by: 'collective', kind: spec.kind, rank: spec.rank, id: spec.id, edge: spec.edge };
      try {
        const r = await this.data.align(p);
        if (this.alignSpec !== spec) {
          return; // another alignment was asked for meanwhile
        }
        this.alignAnswer = r;
        this.alignSteps = r.steps;
      } catch (e) {
        if (this.alignSpec !== spec) {
          return;
        }
        this.alignAnswer = null;
        this.alignError = e instanceof Error ? e.message : String(e);
      }
    }
    this.setSkew(skew);
  }

  private setSkew(skew: Map<number, number>): void {
    this.skew = new Map([...skew].filter(([, ns]) => Math.round(ns) !== 0));
    this.applyShift();
  }

  /** Sets rank `rank`'s total offset: what the user adds is kept apart from the alignment's. */
  setOffset(rank: number, ns: number): void {
    const aligned = this.alignAnswer?.ranks.find(r => r.rank === rank)?.offset_ns ?? 0;
    const skew = new Map(this.skew);
    skew.set(rank, Math.round(ns) - aligned);
    this.setSkew(skew);
  }

  /** Total offset per rank, ns: the alignment's plus the user's. */
  private offsets(): Map<number, number> {
    const out = new Map<number, number>();
    for (const r of this.tree?.ranks || []) {
      const aligned = this.alignAnswer?.ranks.find(x => x.rank === r.rank)?.offset_ns ?? 0;
      const ns = aligned + (this.skew.get(r.rank) ?? 0);
      if (ns) {
        out.set(r.rank, ns);
      }
    }
    return out;
  }

  /** Moves every rank by its offset: the data is asked for again in the new frame, and what the
   * view holds of single slices (selection, arrows, search hits) moves with its rank. */
  private applyShift(): void {
    const old = this.data.shift;
    const now = this.offsets();
    const move = <M extends { rank: number; start_ns: number }>(m: M): M => {
      const d = (now.get(m.rank) ?? 0) - (old.get(m.rank) ?? 0);
      return d ? { ...m, start_ns: m.start_ns + d } : m;
    };
    if (this.selected) {
      this.selected = move(this.selected);
    }
    this.flows = this.flows.map(f => ({ ...f, from: move(f.from), to: move(f.to) }));
    this.search.hits = this.search.hits.map(move);
    this.data.setShift(now);
    const a = this.alignAnswer;
    this.highlights = a ? a.ranks.filter(r => r.slice).map(r => ({ ...r.slice!, start_ns: r.slice!.start_ns + (now.get(r.rank) ?? 0) })) : [];
    const ref = a ? a.ranks.find(r => r.rank === a.reference) : undefined;
    this.anchorNs = a && ref && ref.anchor_ns !== null ? ref.anchor_ns + (now.get(a.reference) ?? 0) : null;
    if (this.tree) {
      // the extent covers every rank where it is drawn now
      let lo = Infinity;
      let hi = -Infinity;
      for (const r of this.tree.ranks) {
        const off = now.get(r.rank) ?? 0;
        for (const u of r.units) {
          for (const tr of u.tracks) {
            lo = Math.min(lo, tr.start_ns + off);
            hi = Math.max(hi, tr.end_ns + off);
          }
        }
      }
      if (Number.isFinite(lo)) {
        this.vp.setExtent(lo, hi);
      }
    }
    this.renderRanks();
    this.changed();
  }

  private renderRanks(): void {
    if (!this.tree || this.rankPanel.hidden) {
      return;
    }
    renderRankPanel(
      this.rankPanel,
      {
        ranks: this.tree.ranks.map(r => r.rank),
        shown: this.shownRanks ?? new Set(this.tree.ranks.map(r => r.rank)),
        align: this.alignSpec,
        answer: this.alignAnswer,
        steps: this.alignSteps,
        offsets: this.offsets(),
        error: this.alignError
      },
      this.ctx.t,
      {
        setShown: ranks => this.setShown(ranks),
        setAlign: spec => void this.setAlign(spec),
        setOffset: (rank, ns) => this.setOffset(rank, ns)
      }
    );
  }

  /** The steps every rank recorded (the panel's step choices). */
  private async loadSteps(): Promise<void> {
    try {
      const r = await this.data.align({ by: 'step' });
      this.alignSteps = r.steps;
      this.renderRanks();
    } catch {
      /* no step on every rank: only collectives can line the ranks up */
    }
  }

  // --- test hooks ---------------------------------------------------------------------------
  private expose(): void {
    const self = this;
    const vp = this.vp;
    const owner = this.hookOwner;
    window.profinsightTimeline = {
      __owner: () => owner,
      origin: () => self.data.origin,
      navigate: (view, state) => self.ctx.navigate(view, state),
      visibleWindow: () => ({ start_ns: vp.start, end_ns: vp.end }),
      setWindow: (a, b) => vp.setWindow(a, b),
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
          y: rowTop(r, vp.scrollY),
          sticky: !!r.sticky,
          h: r.h
        })),
      toggle: key => self.toggle(key),
      toggleLanes: key => self.toggleLanes(key),
      selected: () => (self.selected ? { ...self.selected } : null),
      flows: () => self.flows.length,
      frame: () => ({ ...self.frameInfo }),
      hits: () => ({ total: self.search.total, index: self.search.index, shown: self.search.hits.length }),
      gaps: () => Array.from(self.data.gaps.values()).reduce((n, g) => n + g.length, 0),
      xOf: ns => vp.xOf(ns),
      yOf: (track, depth = 0) => {
        const r = self.rowByKey.get(track);
        return r ? rowTop(r, vp.scrollY) + TRACK_PAD + depth * SLICE_H + SLICE_H / 2 : null;
      },
      slices: track => self.data.slices?.data.get(track) || null,
      idle: () => self.data.idle() && self.raf === 0,
      range: () => (self.range ? { start_ns: self.range.start, end_ns: self.range.end, tracks: self.rangeTracks } : null),
      setRange: (a, b, tracks) => self.setRange(a, b, true, tracks ?? null),
      stats: () => self.rangeStats,
      tooltip: () =>
        self.tip.content && !self.tip.el.hidden
          ? { name: self.tip.content.name, dur_ns: self.tip.content.dur_ns, count: self.tip.content.count, text: self.tip.el.textContent || '' }
          : null,
      markers: () => [...self.markers],
      addMarker: ns => self.addMarker(ns),
      pin: key => self.pin(key),
      pinned: () => [...self.pinned],
      setFilter: text => self.setFilter(text),
      gapsInfo: () => {
        const g = self.data.gapsWindow;
        return g ? { start_ns: g.start, end_ns: g.end, total: g.total, shown: g.shown } : null;
      },
      shownRanks: () => (self.shownRanks ? [...self.shownRanks] : (self.tree?.ranks || []).map(r => r.rank)).sort((a, b) => a - b),
      showRanks: ranks => self.setShown(new Set(ranks)),
      setAlign: spec => self.setAlign(spec),
      alignment: () => ({
        spec: self.alignSpec,
        answer: self.alignAnswer,
        offsets: Object.fromEntries(self.offsets()),
        error: self.alignError
      }),
      setOffset: (rank, ns) => self.setOffset(rank, ns),
      highlights: () => self.highlights.map(m => ({ ...m }))
    };
  }
}
