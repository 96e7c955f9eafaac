/**
 * The viewer's only door to the server: typed calls over a host-supplied transport.
 *
 * The standalone page (`profinsight serve`) passes a `fetch` transport with the page's own base
 * URL (the token travels as a cookie); JupyterLab passes one built on `ServerConnection`, so
 * Jupyter's token, XSRF and base_url apply.  Views never build URLs themselves.
 */

export type Params = Record<string, string | number | boolean | string[] | undefined | null>;

/** GET `path` (relative to the API root, e.g. `api/profiles`) with query `params`; resolves to JSON. */
export type Transport = (path: string, params?: Params) => Promise<any>;

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
export async function readJson(resp: Response): Promise<any> {
  const text = await resp.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!resp.ok) {
    const msg = body && body.error ? body.error : `${resp.status} ${resp.statusText}`;
    throw new ApiError(msg, resp.status, body && body.fix ? body.fix : null);
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

export interface Diagnostic {
  severity: string;
  code: string;
  message: string;
  file?: string | null;
  fix?: string | null;
}

export interface ProfileInfo {
  id: string;
  path: string;
  format: string;
  level: string | null;
  ranks: number[];
  steps: number[];
  diagnostics: Diagnostic[];
  loaded: boolean;
  tables?: Record<string, number>;
  error: { error: string; fix: string | null } | null;
}

/** Load state of a profile, answered without waiting for the load itself. */
export interface LoadStatus {
  id: string;
  state: 'idle' | 'loading' | 'loaded' | 'error';
  stage: string | null;
  done: number;
  total: number;
  elapsed_s: number;
}

export interface AnalysisPayload {
  analysis: string;
  title: string;
  params: Record<string, string>;
  columns: string[];
  dtypes: string[];
  rows: Record<string, any>[];
  total_rows: number;
  chart: { kind: string; x: string; y: string[]; top: number | null; title: string | null } | null;
}

const enc = encodeURIComponent;

/** Typed calls of the profinsight HTTP API (see docs/server.md). */
export class Api {
  constructor(readonly get: Transport) {}

  /** The served profiles; `load: false` lists them without loading any (what the picker needs). */
  profiles(load = false): Promise<{ profiles: ProfileInfo[] }> {
    return this.get('api/profiles', { load: load ? 1 : 0 });
  }
  profile(id: string): Promise<ProfileInfo> {
    return this.get(`api/profiles/${enc(id)}`);
  }
  status(id: string): Promise<LoadStatus> {
    return this.get(`api/profiles/${enc(id)}/status`);
  }
  messages(lang: string): Promise<{ lang: string; languages: string[]; messages: Record<string, string> }> {
    return this.get('api/messages', { lang });
  }
  analyses(id: string): Promise<{ analyses: any[] }> {
    return this.get(`api/profiles/${enc(id)}/analyses`);
  }
  analysis(id: string, name: string, params: Params = {}): Promise<AnalysisPayload> {
    return this.get(`api/profiles/${enc(id)}/analyses/${enc(name)}`, params);
  }
  table(id: string, name: string, params: Params = {}): Promise<any> {
    return this.get(`api/profiles/${enc(id)}/tables/${enc(name)}`, params);
  }
  timeline(id: string, what: string, params: Params = {}): Promise<any> {
    return this.get(`api/profiles/${enc(id)}/timeline/${what}`, params);
  }
  compare(base: string, others: string[], params: Params = {}): Promise<any> {
    return this.get('api/compare', { base, others, ...params });
  }
}
