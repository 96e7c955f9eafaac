/**
 * What the timeline asks the server for, and what it keeps of the answers: the track tree,
 * window answers (slices, counters) per kind, the device idle gaps, and the one-off calls behind
 * a selection or a search.
 *
 * Never freezing: data is asked for by window, tracks and pixel width (the server merges
 * sub-pixel slices and down-samples counters keeping peaks); at most one request per kind is in
 * flight and an answer for an older view is dropped when a newer one is wanted; the fetched
 * window is OVERSCAN x the visible one, so panning and small zooms redraw from memory.
 */
import type { Api } from '../api';
import type { AlignAnswer, CountersAnswer, DetailsAnswer, FlowsAnswer, SearchAnswer, SlicesAnswer, StatsAnswer } from '../generated/wire';
import { CounterCols, LANE_CAP, SliceCols, sliceTracks, TrackTree } from './model';
import type { Mark } from './renderer';

export const OVERSCAN = 2; // fetched window = 2 x visible window: pans of half a screen redraw from memory

export type WindowKind = 'slice' | 'counter';

/** One window answer in memory: the window and resolution it was asked for, its tracks. */
export interface Fetched<T> {
  start: number;
  end: number;
  pxNs: number;
  tracks: Set<string>;
  /** tracks asked for only down to LANE_CAP levels (see `want`) */
  capped: Set<string>;
  data: Map<string, T>;
}

/** The visible window (ns relative to the origin) and the plot's width in css px. */
export interface Visible {
  start: number;
  end: number;
  plotW: number;
}

/** A details answer, or why there is none. */
export type DetailsResult = DetailsAnswer | { error: unknown };

export class TimelineData {
  /** absolute epoch ns of relative 0 (a string: it exceeds 2^53) */
  origin = '0';
  slices: Fetched<SliceCols> | null = null;
  counters: Fetched<CounterCols> | null = null;
  gaps = new Map<number, [number, number][]>();
  /**
   * Per-rank time offsets (ns added to that rank's times) of an aligned multi-rank view.  The
   * window routes answer in the shifted frame (`shift`); answers that name single slices (flows,
   * search) are shifted here, so everything the view holds is in the frame it draws.
   */
  shift = new Map<number, number>();
  private inflight = { slice: false, counter: false };
  private seq = { slice: 0, counter: 0 };

  /** Sets the offsets; what is in memory was drawn in the old frame, so it goes. */
  setShift(shift: Map<number, number>): void {
    const key = (m: Map<number, number>) => shiftParam(m) ?? '';
    if (key(shift) === key(this.shift)) {
      return;
    }
    this.shift = new Map(shift);
    this.slices = null;
    this.counters = null;
    this.seq.slice++;
    this.seq.counter++;
    this.gaps = new Map();
    this.gapsWindow = null;
    this.gapsSeq++;
  }

  /** `m` with its start in the shifted frame (its rank's offset added). */
  moved<M extends { rank: number; start_ns: number }>(m: M): M {
    const off = this.shift.get(m.rank) ?? 0;
    return off ? { ...m, start_ns: m.start_ns + off } : m;
  }

  private withShift<P extends Record<string, string | number | string[]>>(p: P): P {
    const sh = shiftParam(this.shift);
    if (sh) {
      (p as Record<string, string | number | string[]>).shift = sh;
    }
    return p;
  }

  /**
   * `arrived` runs after every answer that was not superseded (the view repaints and asks again:
   * it may have moved while the answer was on its way); `failed` gets a failed request's message.
   */
  constructor(
    private readonly api: Api,
    private readonly profileId: string,
    private readonly arrived: () => void,
    private readonly failed: (message: string) => void
  ) {}

  async tracks(): Promise<TrackTree> {
    const tree = await this.api.timeline(this.profileId, 'tracks');
    this.origin = tree.origin_ns;
    return tree;
  }

  /** No window request in flight. */
  idle(): boolean {
    return !this.inflight.slice && !this.inflight.counter && !this.gapsInflight;
  }

  /** Whether the answer in memory covers `ids` over the visible window at about its resolution
   * (and has every level of the tracks no longer capped). */
  private covers(f: Fetched<unknown> | null, ids: string[], v: Visible, pxNs: number, capped: Set<string>): boolean {
    if (!f) {
      return false;
    }
    return (
      v.start >= f.start &&
      v.end <= f.end &&
      pxNs >= f.pxNs * 0.6 &&
      pxNs <= f.pxNs * 1.7 &&
      ids.every(id => f.tracks.has(id) && (!f.capped.has(id) || capped.has(id)))
    );
  }

  /**
   * Asks for `kind` over tracks `ids` unless what is in memory (or in flight) will do; `capped`
   * tracks only down to LANE_CAP levels (a deep host thread before its "show all levels": the
   * levels below were half of a zoomed-out answer, parsed and never drawn).
   */
  async want(kind: WindowKind, ids: string[], v: Visible, capped: string[] = []): Promise<void> {
    const plotW = v.plotW;
    const pxNs = (v.end - v.start) / plotW;
    const have: Fetched<unknown> | null = kind === 'slice' ? this.slices : this.counters;
    if (!ids.length) {
      if (kind === 'slice' && !this.slices) {
        this.slices = { start: v.start, end: v.end, pxNs, tracks: new Set(), capped: new Set(), data: new Map() };
      }
      return;
    }
    const cap = new Set(capped.filter(id => ids.includes(id)));
    if (this.covers(have, ids, v, pxNs, cap) || this.inflight[kind]) {
      return; // an answer in flight re-checks on arrival
    }
    const span = v.end - v.start;
    const start = Math.floor(v.start - span * ((OVERSCAN - 1) / 2));
    const end = Math.ceil(v.end + span * ((OVERSCAN - 1) / 2)) + 1;
    const width = Math.min(20000, Math.max(1, Math.round(plotW * OVERSCAN)));
    const seq = ++this.seq[kind];
    this.inflight[kind] = true;
    let superseded = false;
    try {
      const params: Record<string, string | number | string[]> = { start, end, width, tracks: ids };
      if (cap.size) {
        params.capped = [...cap];
        params.lanes = LANE_CAP;
      }
      const r = await this.api.timeline(this.profileId, kind === 'slice' ? 'slices' : 'counters', this.withShift(params));
      if (seq !== this.seq[kind]) {
        superseded = true; // the offsets changed meanwhile: ask again (below) in the new frame
        return;
      }
      const data = kind === 'slice' ? sliceTracks(r as SlicesAnswer) : new Map(Object.entries((r as CountersAnswer).tracks || {}));
      const f = { start, end, pxNs: (end - start) / width, tracks: new Set(ids), capped: cap, data };
      if (kind === 'slice') {
        this.slices = f as Fetched<SliceCols>;
      } else {
        this.counters = f as Fetched<CounterCols>;
      }
    } catch (e) {
      this.failed(e instanceof Error ? e.message : String(e));
    } finally {
      this.inflight[kind] = false;
      if (superseded) {
        this.arrived();
      }
    }
    this.arrived();
  }

  /** the window the gaps in memory were asked for, with its resolution and how many it holds */
  gapsWindow: { start: number; end: number; pxNs: number; total: number; shown: number } | null = null;
  private gapsInflight = false;
  private gapsSeq = 0;

  /**
   * Device idle gaps (the `idle_gaps` analysis) of the visible window and OVERSCAN around it, per
   * rank, relative ns; asked again when the view leaves that window or zooms in 4x (the server
   * sends at most 2 x width gaps per window, the longest).  `done` repaints.
   */
  async wantGaps(v: Visible, done: () => void): Promise<void> {
    const pxNs = (v.end - v.start) / v.plotW;
    const g = this.gapsWindow;
    const full = g && g.shown === g.total;
    if (g && v.start >= g.start && v.end <= g.end && (full || pxNs >= g.pxNs / 4)) {
      return;
    }
    if (this.gapsInflight) {
      return;
    }
    const span = v.end - v.start;
    const start = Math.floor(v.start - span * ((OVERSCAN - 1) / 2));
    const end = Math.ceil(v.end + span * ((OVERSCAN - 1) / 2)) + 1;
    const width = Math.min(20000, Math.max(1, Math.round(v.plotW * OVERSCAN)));
    const seq = ++this.gapsSeq;
    this.gapsInflight = true;
    try {
      const r = await this.api.timeline(this.profileId, 'gaps', this.withShift({ start, end, width }));
      if (seq !== this.gapsSeq) {
        this.gapsInflight = false;
        done(); // superseded: the view asks again for its current frame
        return;
      }
      const gaps = new Map<number, [number, number][]>();
      for (const [rank, cols] of Object.entries(r.ranks || {})) {
        gaps.set(
          Number(rank),
          cols.start_ns.map((a, i) => [a, cols.end_ns[i]] as [number, number])
        );
      }
      this.gaps = gaps;
      this.gapsWindow = { start, end, pxNs: (end - start) / width, total: r.total, shown: r.shown };
      done();
    } catch {
      /* a profile without device data has no gaps to mark */
    } finally {
      this.gapsInflight = false;
    }
  }

  /** Per-name statistics of the slices overlapping [start, end) (relative ns) on `tracks` (all when empty). */
  stats(start: number, end: number, tracks: string[]): Promise<StatsAnswer> {
    const p: Record<string, string | number | string[]> = { start: Math.floor(start), end: Math.ceil(end) };
    if (tracks.length) {
      p.tracks = tracks;
    }
    return this.api.timeline(this.profileId, 'stats', this.withShift(p));
  }

  /** The slice `kind`/`rank`/`id` and its launch arrows (times relative ns, shifted). */
  async flows(kind: string, rank: number, id: number): Promise<FlowsAnswer> {
    const r = await this.api.timeline(this.profileId, 'flows', { kind, rank, id });
    return {
      ...r,
      selection: this.moved(r.selection),
      flows: (r.flows || []).map(f => ({ ...f, from: this.moved(f.from), to: this.moved(f.to) }))
    };
  }

  /**
   * Per-rank offsets that line up a step start (`by=step`) or one collective (`by=collective`)
   * on every rank, computed by the server from the data (timeline/align.py).
   */
  align(p: Record<string, string | number>): Promise<AlignAnswer> {
    return this.api.timeline(this.profileId, 'align', p);
  }

  /** Every column of one slice's source row; a failure comes back as `{error}`. */
  details(m: Mark): Promise<DetailsResult> {
    return this.api
      .timeline(this.profileId, 'details', { kind: m.kind, rank: m.rank, id: m.id })
      .catch((e: unknown) => ({ error: e }));
  }

  async search(q: string, limit: number): Promise<SearchAnswer> {
    const r = await this.api.timeline(this.profileId, 'search', { q, limit });
    return { ...r, hits: (r.hits || []).map(h => this.moved(h)) };
  }
}

/** `shift=RANK:NS,...` of the non-zero offsets, or undefined when there are none. */
export function shiftParam(shift: Map<number, number>): string | undefined {
  const parts = [...shift.entries()]
    .filter(([, ns]) => Math.round(ns) !== 0)
    .sort((a, b) => a[0] - b[0])
    .map(([r, ns]) => `${r}:${Math.round(ns)}`);
  return parts.length ? parts.join(',') : undefined;
}
