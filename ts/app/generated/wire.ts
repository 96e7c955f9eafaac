/**
 * The JSON shapes the Python side sends (analysis payloads, chart specs, HTTP answers).
 *
 * Generated from src/profinsight/schema/wire.py by `python -m profinsight.schema.wire`;
 * do not edit by hand (tests/test_wire_types.py fails when this file drifts).
 */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type ChartKind = 'bar' | 'stacked' | 'line';
export type Severity = 'info' | 'warning' | 'error';
export type LoadState = 'idle' | 'loading' | 'loaded' | 'error';

/** A chart spec; `series` may be missing in outputs saved by earlier versions. */
export interface ChartSpec {
  kind: ChartKind;
  x: string;
  y: string[];
  top: number;
  title: string;
  /** line charts: one line per distinct value of these columns */
  series?: string[];
}

/** One analysis result: its schema, a page of its rows, and the chart its registration declares; answers of the HTTP route say which page (`offset`, `limit`), notebook outputs do not. */
export interface AnalysisPayload {
  analysis: string | null;
  title: string | null;
  params: Record<string, Json>;
  columns: string[];
  dtypes: string[];
  rows: Record<string, Json>[];
  total_rows: number;
  chart: ChartSpec | null;
  /** index of the page's first row in the whole result */
  offset?: number;
  /** the page size asked for (at most 5000) */
  limit?: number;
  /** integer columns with values beyond 2^53 (epoch nanoseconds), their values as decimal text aligned with `rows`: a JavaScript number cannot hold them, the table and its CSV export show these */
  exact?: Record<string, (string | null)[]>;
}

/** With its parameter at `value`, parameter `param` must be one of `allowed`. */
export interface ParamRule {
  value: Json;
  param: string;
  allowed: Json[];
}

export interface ParamInfo {
  name: string;
  /** the Python type name: int, float, str, bool */
  type: string;
  default: Json;
  choices: Json[] | null;
  help: string;
  /** pairs with other parameters that have no answer (a form does not offer them) */
  requires: ParamRule[];
}

/** An analysis as its registration declares it (`GET api/profiles/ID/analyses`). */
export interface AnalysisInfo {
  name: string;
  title: string;
  doc: string;
  chart: ChartSpec | null;
  /** column -> meaning */
  columns: Record<string, string>;
  params: ParamInfo[];
}

export interface AnalysesAnswer {
  analyses: AnalysisInfo[];
}

/** What the doctor found (`Diagnostic.to_dict`). */
export interface Diagnostic {
  severity: Severity;
  code: string;
  message: string;
  file?: string | null;
  fix?: string | null;
  rank?: number | null;
}

/** How every route answers a failure (with the HTTP status): what is wrong, what to do. */
export interface ErrorAnswer {
  error: string;
  fix: string | null;
}

/** A served profile (`GET api/profiles/ID`); `tables` (row counts) once it is loaded, and `tier`: `summary` where its ranks were read from their own summaries (no trace parsed), `full` where their traces were imported. */
export interface ProfileInfo {
  id: string;
  path: string;
  format: string;
  level: string | null;
  ranks: number[];
  steps: number[];
  diagnostics: Diagnostic[];
  loaded: boolean;
  error: ErrorAnswer | null;
  tables?: Record<string, number>;
  tier?: 'summary' | 'full';
}

export interface ProfilesAnswer {
  profiles: ProfileInfo[];
}

/** Load state of a profile, answered without waiting for the load itself. */
export interface LoadStatus {
  id: string;
  state: LoadState;
  /** cached | importing | reading | parsing | building | caching (importers.progress) */
  stage: string | null;
  /** ranks loaded so far, of `total` */
  done: number;
  total: number;
  elapsed_s: number;
  /** bytes of the run's source files read so far (a streamed trace as it goes, the other files of a rank when the rank is done), of `bytes_total` */
  bytes_done: number;
  bytes_total: number;
  /** the file being read now (its name) */
  file: string | null;
  /** the ranks imported so far (ranks found in the cache are counted in `done` only) */
  ranks_ready: number[];
  background: BackgroundImport;
}

/** The background full import of a summary-tier run: the ranks planned (most suspicious first) and those already in the cache (opening them is a warm read). */
export interface BackgroundImport {
  ranks: number[];
  done: number[];
}

/** `GET api/profiles/ID/ranks/R`: the id under which rank R is served on its own, in full. */
export interface OpenRankAnswer {
  id: string;
  rank: number;
}

/** The run's figures from the profiler's own summary files. */
export interface VendorSummary {
  source: string;
  files: string[];
  steps: AnalysisPayload;
  comm: AnalysisPayload;
}

/** A run before its import (`GET api/profiles/ID/summary`): what discovery saw and, where the profiler wrote them, its own step and communication summaries (no trace parsed). */
export interface SummaryAnswer {
  id: string;
  format: string;
  level: string | null;
  ranks: number[];
  rank_count: number;
  files: number;
  size_bytes: number;
  /** `{source: "vendor_summary", files: [...], steps: AnalysisPayload, comm: AnalysisPayload}` (step_breakdown and comm_summary of the summaries), or None where there are none */
  vendor: VendorSummary | null;
  vendor_error: string | null;
  elapsed_s: number;
}

/** The ranks of a run imported so far, while the others import (`GET api/profiles/ID/ready`). */
export interface ReadyAnswer {
  id: string;
  ranks: number[];
  /** step_breakdown of those ranks, from their own tasks (None before the first is ready) */
  steps: AnalysisPayload | null;
}

/** The viewer's labels (`ui.*` keys of the message catalogue). */
export interface MessagesAnswer {
  lang: string;
  languages: string[];
  messages: Record<string, string>;
}

/** One page of a canonical table (`GET api/profiles/ID/tables/NAME`). */
export interface TablePage {
  table: string;
  total_rows: number;
  offset: number;
  limit: number;
  columns: string[];
  dtypes: string[];
  rows: Record<string, Json>[];
}

export interface TrackInfo {
  id: string;
  name: string;
  kind: 'slice' | 'counter';
  source: string | null;
  rows: number;
  start_ns: number;
  end_ns: number;
  depth: number;
  value_unit: string | null;
}

export interface UnitInfo {
  name: string;
  kind: string;
  tracks: TrackInfo[];
}

export interface RankTracks {
  rank: number;
  units: UnitInfo[];
}

/** `GET .../timeline/tracks`: rank -> unit -> track. */
export interface TrackTree {
  origin_ns: string;
  start_ns: number;
  end_ns: number;
  ranks: RankTracks[];
}

/** One track of a slices answer: `name` indexes the answer's `names`; `id` is -1 and `merged` 1 on rows that stand for several sub-pixel slices. */
export interface SliceColumns {
  source: string | null;
  depth: number[];
  name: number[];
  start_ns: number[];
  dur_ns: number[];
  id: number[];
  count: number[];
  merged: number[];
}

/** `GET .../timeline/slices`: a shared name dictionary plus per-track columns. */
export interface SlicesAnswer {
  origin_ns: string;
  start_ns: number;
  end_ns: number;
  width: number;
  px_ns: number;
  rows: number;
  names: string[];
  tracks: Record<string, SliceColumns>;
}

/** The last sample before the window (where the line enters it). */
export interface CounterBefore {
  ts_ns: number;
  value: number;
}

/** One track of a counters answer: buckets with their min, max and last value. */
export interface CounterColumns {
  start_ns: number[];
  end_ns: number[];
  min: number[];
  max: number[];
  last: number[];
  count: number[];
  before?: CounterBefore;
}

/** `GET .../timeline/counters`. */
export interface CountersAnswer {
  origin_ns: string;
  start_ns: number;
  end_ns: number;
  width: number;
  px_ns: number;
  rows: number;
  tracks: Record<string, CounterColumns>;
}

/** One slice where it sits on the timeline (a selection, an arrow's end, a search hit). */
export interface TimelineSlice {
  track: string;
  kind: string;
  rank: number;
  id: number;
  name: string;
  start_ns: number;
  dur_ns: number;
  depth: number;
}

/** A launch arrow: host op or API call -> the device task it launched. */
export interface Flow {
  from: TimelineSlice;
  to: TimelineSlice;
  link: Json;
}

/** `GET .../timeline/flows`: the selection and its launch arrows. */
export interface FlowsAnswer {
  origin_ns: string;
  selection: TimelineSlice;
  flows: Flow[];
}

/** `GET .../timeline/search`: the first `limit` hits in time order; `total` counts all. */
export interface SearchAnswer {
  origin_ns: string;
  query: string;
  total: number;
  hits: TimelineSlice[];
}

/** `GET .../timeline/details`: every column of the slice's canonical row. */
export interface DetailsAnswer {
  origin_ns: string;
  kind: string;
  table: string;
  track: string;
  row: Record<string, Json>;
}

/** One name's slices in a range: count, summed whole durations, self time, avg, min, max (ns). */
export interface NameStats {
  name: string;
  count: number;
  total_ns: number;
  self_ns: number;
  avg_ns: number;
  min_ns: number;
  max_ns: number;
}

/** `GET .../timeline/stats`: the slices that overlap [start_ns, end_ns) on `tracks` tracks, by name (longest total first; `names_total` counts every name, at most 500 are listed). */
export interface StatsAnswer {
  origin_ns: string;
  start_ns: number;
  end_ns: number;
  tracks: number;
  count: number;
  total_ns: number;
  names_total: number;
  names: NameStats[];
}

/** One rank's idle gaps in a window (parallel columns). */
export interface RankGaps {
  start_ns: number[];
  end_ns: number[];
  host_activity: string[];
}

/** `GET .../timeline/gaps`: the device idle gaps overlapping the window, per rank id; at most 2 x width of them (the longest), `total` counts all. */
export interface GapsAnswer {
  origin_ns: string;
  start_ns: number;
  end_ns: number;
  total: number;
  shown: number;
  ranks: Record<string, RankGaps>;
}

/** One rank of an alignment: its anchor time (None: the rank lacks it), the offset that puts the anchor on the reference rank's, and the anchor as drawn (the collective to highlight). */
export interface RankAlignment {
  rank: number;
  anchor_ns: number | null;
  offset_ns: number;
  slice: TimelineSlice | null;
}

/** `GET .../timeline/align`: per-rank offsets lining up a step start or one collective (timeline/align.py); `steps` lists the steps every rank recorded. */
export interface AlignAnswer {
  origin_ns: string;
  by: string;
  edge: string;
  step: number | null;
  reference: number;
  name: string | null;
  steps: number[];
  missing: number[];
  ranks: RankAlignment[];
}

/** One run of a comparison: its name (the served id), path, format, and the ranks and steps it contributed. */
export interface CompareRun {
  name: string;
  path: string;
  format: string;
  ranks: number[];
  steps: number[];
}

/** `GET api/compare`: `Comparison.to_dict()`, the JSON of `profinsight compare --format json`. Each table is a list of records with the columns of its method (docs/views/compare.md): `steps()`, `waterfall()` per pair label, `op_changes(by)` per `type` / `name`, `ops("type")`, `modules()` (`modules_folded`: layers folded), `summary()`, and `noise_verdicts()`. */
export interface CompareAnswer {
  runs: CompareRun[];
  steps: Record<string, Json>[];
  waterfalls: Record<string, Record<string, Json>[]>;
  op_changes: Record<string, Record<string, Json>[]>;
  ops_by_type: Record<string, Json>[];
  modules: Record<string, Json>[];
  modules_folded: Record<string, Json>[];
  summary: Record<string, Json>[];
  verdicts: Record<string, Json>[];
}
