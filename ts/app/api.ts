/**
 * The viewer's only door to the server: typed calls over a host-supplied transport.
 *
 * The standalone page (`profinsight serve`) passes a `fetch` transport with the page's own base
 * URL (the token travels as a cookie); JupyterLab passes one built on `ServerConnection`, so
 * Jupyter's token, XSRF and base_url apply.  Views never build URLs themselves.
 */

import type {
  AlignAnswer,
  CompareAnswer,
  AnalysesAnswer,
  AnalysisPayload,
  CountersAnswer,
  DetailsAnswer,
  FlowsAnswer,
  GapsAnswer,
  LoadStatus,
  MessagesAnswer,
  OpenRankAnswer,
  ProfileInfo,
  ProfilesAnswer,
  SearchAnswer,
  SlicesAnswer,
  StatsAnswer,
  ReadyAnswer,
  SummaryAnswer,
  TablePage,
  TrackTree
} from './generated/wire';

// the wire shapes are declared once, in Python (src/profinsight/schema/wire.py)
export type { AnalysisPayload, Diagnostic, Json, LoadStatus, ProfileInfo, SummaryAnswer } from './generated/wire';

export type Params = Record<string, string | number | boolean | string[] | undefined | null>;

/** Which rows of an analysis result to answer: from row `offset` (default 0), at most `limit`
 * rows (default and most: 5000).  The answer's `total_rows` counts the whole result. */
export interface Page {
  offset?: number;
  limit?: number;
}

/** What each `timeline/<what>` route answers. */
export interface TimelineAnswers {
  tracks: TrackTree;
  slices: SlicesAnswer;
  counters: CountersAnswer;
  flows: FlowsAnswer;
  search: SearchAnswer;
  details: DetailsAnswer;
  stats: StatsAnswer;
  gaps: GapsAnswer;
  align: AlignAnswer;
}

export type { CompareAnswer } from './generated/wire';

/**
 * GET `path` (relative to the API root, e.g. `api/profiles`) with query `params`; resolves to the
 * parsed JSON, which `Api` types by route.
 */
export type Transport = (path: string, params?: Params) => Promise<unknown>;

/** An error the server explained: `{error, fix}` with the HTTP status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly fix: string | null = null
  ) {
    super(message);
  }
}

export function query(params: Params = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null) {
      continue;
    }
    q.append(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Turns a fetch Response into JSON or an ApiError carrying the server's message and fix. */
export async function readJson(resp: Response): Promise<unknown> {
  const text = await resp.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!resp.ok) {
    const err = body !== null && typeof body === 'object' ? (body as { error?: unknown; fix?: unknown }) : {};
    const msg = err.error ? String(err.error) : `${resp.status} ${resp.statusText}`;
    throw new ApiError(msg, resp.status, err.fix ? String(err.fix) : null);
  }
  return body;
}

/** The transport of the standalone page: same-origin fetch under `baseUrl`. */
export function fetchTransport(baseUrl: string): Transport {
  const base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
  return async (path, params) => {
    const resp = await fetch(base + path + query(params), { credentials: 'same-origin' });
    return readJson(resp);
  };
}

const enc = encodeURIComponent;

/** Typed calls of the profinsight HTTP API (see docs/server.md). */
export class Api {
  constructor(readonly get: Transport) {}

  /** GET `path`, its answer taken as the route's declared shape (the server is the one writer). */
  protected call<T>(path: string, params?: Params): Promise<T> {
    return this.get(path, params) as Promise<T>;
  }

  /** The served profiles; `load: false` lists them without loading any (what the picker needs). */
  profiles(load = false): Promise<ProfilesAnswer> {
    return this.call('api/profiles', { load: load ? 1 : 0 });
  }
  /** The profile's description; `lang` gives its diagnostics' words in that language. */
  profile(id: string, lang?: string): Promise<ProfileInfo> {
    return this.call(`api/profiles/${enc(id)}`, lang ? { lang } : undefined);
  }
  status(id: string): Promise<LoadStatus> {
    return this.call(`api/profiles/${enc(id)}/status`);
  }
  /** The id under which rank `rank` of run `id` is served on its own, in full (its traces). */
  openRank(id: string, rank: number): Promise<OpenRankAnswer> {
    return this.call(`api/profiles/${enc(id)}/ranks/${enc(String(rank))}`);
  }
  /** The ranks of a run imported so far, while the rest import: their step breakdown from their tasks. */
  ready(id: string): Promise<ReadyAnswer> {
    return this.call(`api/profiles/${enc(id)}/ready`);
  }
  /** The run before its import: discovery's facts and the vendor's own summaries (no trace parsed). */
  summary(id: string): Promise<SummaryAnswer> {
    return this.call(`api/profiles/${enc(id)}/summary`);
  }
  messages(lang: string): Promise<MessagesAnswer> {
    return this.call('api/messages', { lang });
  }
  analyses(id: string): Promise<AnalysesAnswer> {
    return this.call(`api/profiles/${enc(id)}/analyses`);
  }
  /** Analysis `name` run with `params`, one `page` of its rows (the first 5000 by default). */
  analysis(id: string, name: string, params: Params = {}, page: Page = {}): Promise<AnalysisPayload> {
    return this.call(`api/profiles/${enc(id)}/analyses/${enc(name)}`, { ...params, offset: page.offset, limit: page.limit });
  }
  table(id: string, name: string, params: Params = {}): Promise<TablePage> {
    return this.call(`api/profiles/${enc(id)}/tables/${enc(name)}`, params);
  }
  timeline<K extends keyof TimelineAnswers>(id: string, what: K, params: Params = {}): Promise<TimelineAnswers[K]> {
    return this.call(`api/profiles/${enc(id)}/timeline/${what}`, params);
  }
  compare(base: string, others: string[], params: Params = {}): Promise<CompareAnswer> {
    return this.call('api/compare', { base, others, ...params });
  }
}
