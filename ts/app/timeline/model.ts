/**
 * Timeline data as the renderer needs it: the track tree laid out into rows (rank header, unit
 * header, tracks), time ticks for the ruler, colours.  No drawing and no DOM here, so the layout
 * rules can be read in one place.
 *
 * Times are nanoseconds relative to the profile's `origin_ns` (plain numbers: exact up to ~104
 * days); absolute epoch ns exceed 2^53 and only ever cross this code as strings/BigInt.
 */

import type { CounterColumns, SliceColumns, SlicesAnswer, TrackInfo, TrackTree, UnitInfo } from '../generated/wire';

export type { SlicesAnswer, TrackInfo, TrackTree, UnitInfo } from '../generated/wire';

/**
 * Columns of one track in a slices answer (docs/server.md): `name` holds indexes into the
 * answer's `names`; `id` is -1 and `merged` 1 on rows that stand for several sub-pixel slices.
 * `names` and `colors` are attached on arrival (shared by every track of one answer), so a frame
 * never hashes a name.
 */
export interface SliceCols extends SliceColumns {
  names: string[];
  colors: string[];
}

/** Per-track columns of an answer with its name dictionary and colours attached. */
export function sliceTracks(r: SlicesAnswer): Map<string, SliceCols> {
  const names = r.names || [];
  const colors = names.map(nameColor);
  const out = new Map<string, SliceCols>();
  for (const [id, cols] of Object.entries(r.tracks || {})) {
    out.set(id, { ...cols, names, colors });
  }
  return out;
}

export type CounterCols = CounterColumns;

export type RowKind = 'rank' | 'unit' | 'track';

export interface Row {
  key: string;
  kind: RowKind;
  label: string;
  rank: number;
  unit?: UnitInfo;
  unitKey?: string;
  track?: TrackInfo;
  collapsed?: boolean;
  /** slice tracks: nesting levels drawn (slices deeper than this are not drawn) */
  lanes?: number;
  /** a host/API track deeper than LANE_CAP: its gutter toggles between LANE_CAP and all levels */
  capped?: boolean;
  /** a track shown in the pinned group at the top */
  pinned?: boolean;
  /**
   * drawn at a fixed place under the ruler, whatever the vertical scroll (the pinned group's
   * header and tracks, while they take at most STICKY_MAX of the rows' height)
   */
  sticky?: boolean;
  y: number;
  h: number;
}

export const RULER_H = 26;
export const GUTTER_W = 230;
export const RANK_H = 24;
export const UNIT_H = 22;
export const SLICE_H = 17;
export const COUNTER_H = 40;
export const TRACK_PAD = 3;
/** Units with more tracks than this start collapsed (e.g. 112 "Acc PMU" counters). */
export const COLLAPSE_OVER = 12;

export function unitKey(rank: number, unit: string): string {
  return `r${rank}/u/${unit}`;
}

export function rankKey(rank: number): string {
  return `r${rank}`;
}

/**
 * Host and API threads show at most this many nesting levels until their "show all" toggle is
 * used: a Python main thread is often ~30 levels deep and would otherwise push the device
 * streams below the fold on first open.
 */
export const LANE_CAP = 8;

/** Whether `t` (in a unit of kind `unitKind`) starts with its levels capped at LANE_CAP. */
export function cappable(t: TrackInfo, unitKind: string): boolean {
  return t.kind === 'slice' && (unitKind === 'host' || unitKind === 'api') && t.depth > LANE_CAP;
}

export function trackHeight(t: TrackInfo, lanes = t.depth): number {
  return t.kind === 'counter' ? COUNTER_H : Math.max(1, lanes) * SLICE_H + 2 * TRACK_PAD;
}

/** What the user narrowed the rows to: a lane filter and the pinned tracks. */
export interface LayoutOptions {
  /**
   * Comma-separated alternatives, each matched case-insensitively as a substring of
   * "Rank N / unit / track"; a track shows when any alternative matches.  Empty: every track.
   */
  filter?: string;
  /** track ids drawn first, in a "Pinned" group above every rank, in pin order */
  pinned?: string[];
  /** the ranks shown (side by side, in rank order); undefined: every rank */
  ranks?: Set<number>;
}

/** Whether the track `path` ("Rank 0 / HCCL / Plane 3") passes `filter`. */
export function passes(path: string, filter: string | undefined): boolean {
  const alts = (filter || '')
    .split(',')
    .map(a => a.trim().toLowerCase())
    .filter(a => a);
  if (!alts.length) {
    return true;
  }
  const p = path.toLowerCase();
  return alts.some(a => p.includes(a));
}

export const PINNED_KEY = 'pinned';

/**
 * The pinned group stays on screen while the rows under it scroll as long as it takes at most
 * this share of the rows' height; a taller group scrolls with the rest (else nothing would be
 * left to scroll).
 */
export const STICKY_MAX = 0.6;

/**
 * Marks the pinned group's rows sticky when they fit in STICKY_MAX of `viewH` (the rows'
 * height on screen) and returns the sticky height (0: nothing sticks).  The group is always the
 * first rows of a layout, so the sticky rows are `rows[0..k)` and their bottom is the height.
 */
export function stickPinned(rows: Row[], viewH: number): number {
  let h = 0;
  let k = 0;
  while (k < rows.length && (rows[k].key === PINNED_KEY || rows[k].pinned)) {
    h = rows[k].y + rows[k].h;
    k++;
  }
  const stick = h > 0 && h <= viewH * STICKY_MAX;
  for (let i = 0; i < k; i++) {
    rows[i].sticky = stick;
  }
  return stick ? h : 0;
}

/** Canvas y (css px) of the top of `row`: sticky rows ignore the vertical scroll. */
export function rowTop(row: Row, scrollY: number): number {
  return RULER_H + row.y - (row.sticky ? 0 : scrollY);
}

/**
 * Rows top to bottom; collapsed ranks/units keep only their header.  Capped tracks (see
 * `cappable`) get LANE_CAP lanes unless their id is in `allLanes`.  Pinned tracks come first,
 * under one "Pinned" header, and leave their place below; the filter hides tracks (and units and
 * ranks left empty), never a pinned one.
 */
export function layout(
  tree: TrackTree,
  collapsed: Set<string>,
  t: (k: string, v?: Record<string, string | number>) => string,
  allLanes: Set<string> = new Set(),
  opts: LayoutOptions = {}
): Row[] {
  const rows: Row[] = [];
  let y = 0;
  const pinned = new Set(opts.pinned || []);
  const trackRow = (r: number, u: UnitInfo, uk: string, tr: TrackInfo, label: string): Row => {
    const capped = cappable(tr, u.kind);
    const lanes = capped && !allLanes.has(tr.id) ? LANE_CAP : Math.max(1, tr.depth);
    const h = trackHeight(tr, lanes);
    const row: Row = { key: tr.id, kind: 'track', label, rank: r, unit: u, unitKey: uk, track: tr, y, h, lanes, capped };
    y += h;
    return row;
  };
  if (pinned.size) {
    const pc = collapsed.has(PINNED_KEY);
    rows.push({ key: PINNED_KEY, kind: 'unit', label: t('ui.timeline.pinned', { n: pinned.size }), rank: -1, collapsed: pc, y, h: UNIT_H });
    y += UNIT_H;
    const found = new Map<string, Row>();
    for (const r of tree.ranks) {
      for (const u of r.units) {
        for (const tr of u.tracks) {
          if (pinned.has(tr.id) && !pc) {
            found.set(tr.id, { key: tr.id, kind: 'track', label: '', rank: r.rank, unit: u, track: tr, y: 0, h: 0 });
          }
        }
      }
    }
    for (const id of opts.pinned || []) {
      const f = found.get(id);
      if (f && f.unit && f.track) {
        const row = trackRow(f.rank, f.unit, unitKey(f.rank, f.unit.name), f.track, `R${f.rank} · ${f.unit.name} · ${f.track.name}`);
        rows.push({ ...row, pinned: true });
      }
    }
  }
  for (const r of tree.ranks) {
    if (opts.ranks && !opts.ranks.has(r.rank)) {
      continue;
    }
    const rankLabel = t('ui.timeline.rank', { rank: r.rank });
    const units = r.units
      .map(u => ({ u, tracks: u.tracks.filter(tr => !pinned.has(tr.id) && passes(`${rankLabel} / ${u.name} / ${tr.name}`, opts.filter)) }))
      .filter(x => x.tracks.length || !opts.filter);
    if (!units.length && (opts.filter || pinned.size)) {
      continue;
    }
    const rk = rankKey(r.rank);
    const rc = collapsed.has(rk);
    rows.push({ key: rk, kind: 'rank', label: rankLabel, rank: r.rank, collapsed: rc, y, h: RANK_H });
    y += RANK_H;
    if (rc) {
      continue;
    }
    for (const { u, tracks } of units) {
      const uk = unitKey(r.rank, u.name);
      const uc = collapsed.has(uk);
      rows.push({ key: uk, kind: 'unit', label: u.name, rank: r.rank, unit: u, unitKey: uk, collapsed: uc, y, h: UNIT_H });
      y += UNIT_H;
      if (uc) {
        continue;
      }
      for (const tr of tracks) {
        rows.push(trackRow(r.rank, u, uk, tr, tr.name));
      }
    }
  }
  return rows;
}

/** Index of the first row whose bottom is below `y` (rows sorted by y). */
export function firstRowBelow(rows: Row[], y: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid].y + rows[mid].h <= y) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/** Tick step (1, 2 or 5 x 10^k ns) giving labels at least `minPx` apart. */
export function tickStep(pxNs: number, minPx = 90): number {
  const raw = pxNs * minPx;
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 5, 10]) {
    if (p * m >= raw) {
      return p * m;
    }
  }
  return p * 10;
}

/**
 * A tick label: `164 ms`, `171.8 ms`, `300 us`, `1.2 s`, `40 ns`.  The unit follows the size of
 * `scale` (the ruler passes the largest time it shows, so one ruler keeps one unit; default: the
 * value itself), with as many decimals as the step needs — "171.8 ms", never "171800 us".
 */
export function tickLabel(ns: number, step: number, scale: number = Math.abs(ns)): string {
  const units: [number, string][] = [
    [1e9, 's'],
    [1e6, 'ms'],
    [1e3, 'us'],
    [1, 'ns']
  ];
  const size = Math.max(Math.abs(scale), step);
  for (const [div, u] of units) {
    if (size >= div || div === 1) {
      const decimals = Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / div) - 1e-9)));
      return `${(ns / div).toFixed(decimals)} ${u}`;
    }
  }
  return `${ns} ns`;
}

/** Stable colour of a slice name (same name, same colour on every track and rank). */
export function nameColor(name: string): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  const hue = (h >>> 0) % 360;
  return `hsl(${hue}, 55%, 62%)`;
}

/** `abs` (absolute epoch ns, number or string) relative to `origin` (string), as a number. */
export function relative(abs: number | string | bigint, origin: string): number {
  try {
    return Number(BigInt(String(abs).split('.')[0]) - BigInt(origin));
  } catch {
    return Number(abs) - Number(origin);
  }
}
