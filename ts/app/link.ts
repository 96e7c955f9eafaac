/**
 * Links into the viewer: the page address (`#...`) that names a profile, a view and what the view
 * shows, so that a link opens the same picture and Back/Forward step through it.  Anything can
 * build one (a report, a notebook, another tool) without the viewer's code:
 *
 *   #<profile>/<view>[?<key>=<value>&...]        values URL-encoded (URLSearchParams)
 *
 *   profile  the profile id (as `GET api/profiles` lists it), URL-encoded
 *   view     overview | operators | aicore | timeline | memory | communication | ranks | compare | analyses
 *   start, end   the timeline window: ABSOLUTE profile times in ns, decimal (epoch ns exceed 2^53)
 *   rank     the rank to expand and scroll to
 *   sel      the selected slice: <kind>:<rank>:<id> (kind device_task | host_op | api_call | comm_op | trace_slice)
 *   range    a selected time range: <start ns>-<end ns>, absolute, decimal
 *   rtracks  the slice tracks of a range dragged as a box over rows, comma-separated track ids
 *            (absent: the range is over every shown track)
 *   lanes    the timeline's lane filter text
 *   marks    the timeline's markers, comma-separated ABSOLUTE ns (decimal)
 *   pins     the timeline's pinned tracks, comma-separated track ids (as `timeline/tracks` names them)
 *   q        a search to run (with a window or a selection in the link: its hits are found and
 *            stepped through from there, the link's window and selection stay)
 *   step     a step number
 *   coll     a collective type (Communication: `hcom_allReduce_`, `nccl:all_reduce`, ...)
 *   by, where    the Operators grouping (name | type | name_shape | core) and side (device | host);
 *            with them `rank` is the one rank summed (absent: every rank)
 *   comps, measures   Memory: the components and measures whose curves are shown, comma-separated
 *   brush    Memory: the brushed time range, `<start ms>-<end ms>` (the curves' `t_ms`)
 *   base, other  Compare: the baseline run and the run compared with it (profile ids)
 *   metric   Communication: the matrix's measure (bandwidth_gbps | bytes | transit_us)
 *   phase    Modules: the phase drawn (forward | backward | other; with `q` the search, `rank` the rank)
 *   filter   the view's table filter text
 *   sort     the view's table sort column, `-` before it for descending (`-total_us`)
 *   ranks    the timeline's ranks shown side by side, comma-separated (absent: every rank)
 *   align    what lines the ranks up: step:<N> (each rank's start of step N) or
 *            coll:<kind>:<rank>:<id>[:end] (one collective, matched on every rank; its start, or
 *            its end); the offsets are computed by the server from the data
 *   skew     the user's own per-rank adjustment on top of the alignment, <rank>:<ns>,...
 *
 * Example: `#text_level1/timeline?start=1736408883700000000&end=1736408883800000000&q=hcom`.
 * `start_ns`, `end_ns` and `query` are read as aliases of `start`, `end` and `q`.
 * Keys a view does not know are ignored; a window without `start`/`end` is the whole profile.
 */

/** What a view is handed (by a link, by Back/Forward, or by another view's `navigate`). */
export interface ViewState {
  rank?: number;
  /** absolute profile times in ns; strings where exact values matter (epoch ns exceed 2^53) */
  start_ns?: number | string;
  end_ns?: number | string;
  select?: { kind: string; rank?: number; id: number; name?: string };
  query?: string;
  step?: number;
  /** a collective type the view is filtered to (Communication) */
  collective?: string;
  /** a selected time range, absolute ns; `tracks`: the rows of a box (absent: every shown track) */
  range?: { start_ns: string; end_ns: string; tracks?: string[] };
  /** the timeline's lane filter */
  lanes?: string;
  /** Operators: the grouping and the side (op_summary's `by` and `where`) */
  by?: string;
  where?: string;
  /** the view's table: its filter text and its sort column */
  filter?: string;
  sort?: { key: string; desc: boolean };
  /** Communication: the matrix's measure */
  metric?: string;
  /** Modules: the phase drawn */
  phase?: string;
  /** Compare: the baseline and the changed run (profile ids) */
  base?: string;
  other?: string;
  /** Memory: the curves shown (components and measures) and the brushed range in ms */
  components?: string[];
  measures?: string[];
  brush?: { start_ms: number; end_ms: number };
  /** the timeline's markers, absolute ns (decimal strings: epoch ns exceed 2^53) */
  markers?: string[];
  /** the timeline's pinned tracks, track ids */
  pinned?: string[];
  /** show the window as given (a link), not with the 10 % margin a jump from another view gets */
  exact?: boolean;
  /** the timeline's ranks shown side by side (absent: every rank) */
  ranks?: number[];
  /** what lines the ranks up (offsets from the server: timeline/align) */
  align?: AlignSpec;
  /** the user's per-rank adjustment in ns on top of the alignment (clock skew) */
  skew?: Record<number, number>;
}

/** A step start, or one collective (as the timeline names its slice) at its start or end. */
export type AlignSpec =
  | { by: 'step'; step: number }
  | { by: 'collective'; kind: string; rank: number; id: number; edge: 'start' | 'end' };

/** `align=` text of a spec. */
export function alignText(a: AlignSpec): string {
  return a.by === 'step' ? `step:${a.step}` : `coll:${a.kind}:${a.rank}:${a.id}${a.edge === 'end' ? ':end' : ''}`;
}

/** The spec of an `align=` text, or undefined when it is not one. */
export function parseAlign(text: string): AlignSpec | undefined {
  const p = text.split(':');
  if (p[0] === 'step' && p.length === 2 && INT.test(p[1])) {
    return { by: 'step', step: Number(p[1]) };
  }
  if (p[0] === 'coll' && (p.length === 4 || (p.length === 5 && p[4] === 'end')) && /^[a-z_]+$/.test(p[1]) && INT.test(p[2]) && INT.test(p[3])) {
    return { by: 'collective', kind: p[1], rank: Number(p[2]), id: Number(p[3]), edge: p[4] === 'end' ? 'end' : 'start' };
  }
  return undefined;
}

export interface Link {
  profile: string;
  view: string;
  state: ViewState;
}

const INT = /^-?\d+$/;

/** The link in `hash` (with or without the leading `#`), or null when it names no profile. */
export function parseHash(hash: string): Link | null {
  const raw = hash.replace(/^#/, '');
  if (!raw) {
    return null;
  }
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const [pid, view] = path.split('/').map(s => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  if (!pid) {
    return null;
  }
  const p = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const state: ViewState = {};
  const start = p.get('start') ?? p.get('start_ns'); // start_ns / end_ns / query: the spelled-out aliases
  const end = p.get('end') ?? p.get('end_ns');
  if (start && end && INT.test(start) && INT.test(end)) {
    state.start_ns = start;
    state.end_ns = end;
    state.exact = true;
  }
  const rank = p.get('rank');
  if (rank && INT.test(rank)) {
    state.rank = Number(rank);
  }
  const step = p.get('step');
  if (step && INT.test(step)) {
    state.step = Number(step);
  }
  const sel = (p.get('sel') || '').split(':');
  if (sel.length === 3 && sel[0] && INT.test(sel[1]) && INT.test(sel[2])) {
    state.select = { kind: sel[0], rank: Number(sel[1]), id: Number(sel[2]) };
  }
  const range = (p.get('range') || '').match(/^(-?\d+)-(-?\d+)$/);
  if (range) {
    state.range = { start_ns: range[1], end_ns: range[2] };
    const rtracks = (p.get('rtracks') || '').split(',').filter(t => t);
    if (rtracks.length) {
      state.range.tracks = rtracks;
    }
  }
  const query = p.get('q') ?? p.get('query');
  if (query) {
    state.query = query;
  }
  if (p.get('lanes')) {
    state.lanes = p.get('lanes')!;
  }
  const marks = (p.get('marks') || '').split(',').filter(m => INT.test(m));
  if (marks.length) {
    state.markers = marks;
  }
  const pins = (p.get('pins') || '').split(',').filter(t => t);
  if (pins.length) {
    state.pinned = pins;
  }
  if (p.get('coll')) {
    state.collective = p.get('coll')!;
  }
  for (const key of ['by', 'where', 'filter', 'base', 'other', 'phase', 'metric'] as const) {
    if (p.get(key)) {
      state[key] = p.get(key)!;
    }
  }
  for (const [key, field] of [
    ['comps', 'components'],
    ['measures', 'measures']
  ] as const) {
    const items = (p.get(key) || '').split(',').filter(x => x);
    if (items.length) {
      state[field] = items;
    }
  }
  const brush = (p.get('brush') || '').match(/^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/);
  if (brush && Number(brush[2]) > Number(brush[1])) {
    state.brush = { start_ms: Number(brush[1]), end_ms: Number(brush[2]) };
  }
  const sort = (p.get('sort') || '').match(/^(-?)(\w+)$/);
  if (sort) {
    state.sort = { key: sort[2], desc: sort[1] === '-' };
  }
  const ranks = (p.get('ranks') || '').split(',').filter(r => INT.test(r));
  if (ranks.length) {
    state.ranks = ranks.map(Number);
  }
  const align = parseAlign(p.get('align') || '');
  if (align) {
    state.align = align;
  }
  const skew: Record<number, number> = {};
  for (const part of (p.get('skew') || '').split(',')) {
    const m = part.match(/^(\d+):(-?\d+)$/);
    if (m) {
      skew[Number(m[1])] = Number(m[2]);
    }
  }
  if (Object.keys(skew).length) {
    state.skew = skew;
  }
  return { profile: pid, view: view || 'overview', state };
}

/** The hash (with `#`) of `profile`, `view` and what of `state` a link carries. */
export function buildHash(profile: string, view: string, state: ViewState = {}): string {
  const p = new URLSearchParams();
  if (state.start_ns !== undefined && state.end_ns !== undefined) {
    p.set('start', String(state.start_ns));
    p.set('end', String(state.end_ns));
  }
  if (typeof state.rank === 'number') {
    p.set('rank', String(state.rank));
  }
  if (state.select && state.select.kind) {
    p.set('sel', `${state.select.kind}:${state.select.rank ?? 0}:${state.select.id}`);
  }
  if (state.range) {
    p.set('range', `${state.range.start_ns}-${state.range.end_ns}`);
    if (state.range.tracks) {
      p.set('rtracks', state.range.tracks.join(','));
    }
  }
  if (state.lanes) {
    p.set('lanes', state.lanes);
  }
  if (state.markers && state.markers.length) {
    p.set('marks', state.markers.join(','));
  }
  if (state.pinned && state.pinned.length) {
    p.set('pins', state.pinned.join(','));
  }
  if (state.query) {
    p.set('q', state.query);
  }
  if (typeof state.step === 'number') {
    p.set('step', String(state.step));
  }
  if (state.collective) {
    p.set('coll', state.collective);
  }
  for (const key of ['by', 'where', 'filter', 'base', 'other', 'phase', 'metric'] as const) {
    if (state[key]) {
      p.set(key, state[key]!);
    }
  }
  if (state.sort) {
    p.set('sort', `${state.sort.desc ? '-' : ''}${state.sort.key}`);
  }
  if (state.components && state.components.length) {
    p.set('comps', state.components.join(','));
  }
  if (state.measures && state.measures.length) {
    p.set('measures', state.measures.join(','));
  }
  if (state.brush) {
    p.set('brush', `${state.brush.start_ms}-${state.brush.end_ms}`);
  }
  if (state.ranks && state.ranks.length) {
    p.set('ranks', state.ranks.join(','));
  }
  if (state.align) {
    p.set('align', alignText(state.align));
  }
  const skew = Object.entries(state.skew || {}).filter(([, ns]) => Math.round(ns) !== 0);
  if (skew.length) {
    p.set('skew', skew.map(([r, ns]) => `${r}:${Math.round(ns)}`).join(','));
  }
  const qs = p.toString();
  return `#${encodeURIComponent(profile)}/${view}${qs ? `?${qs}` : ''}`;
}
