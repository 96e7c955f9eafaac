/**
 * Requests to the profinsight API inside JupyterLab: under `{base_url}profinsight/`, through
 * `ServerConnection`, so Jupyter's token, login cookie and XSRF header apply and the requests
 * work behind JupyterHub or jupyter-server-proxy (no extra port, no URL of our own).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { Api, Params, query, readJson, Transport } from '../app/api';
import type { Diagnostic } from '../app/generated/wire';

export const URL_PREFIX = 'profinsight';

/**
 * GET transport for the viewer shell (`new Viewer(node, jupyterTransport(), ...)`).
 * `cache: 'no-cache'` because with JupyterLab's default (`no-store`) ServerConnection appends a
 * bare `?<timestamp>` cache buster, which an analysis route would take for a parameter; the
 * API answers with `Cache-Control: no-store`, so nothing is cached either way.
 */
export function jupyterTransport(): Transport {
  const settings = ServerConnection.makeSettings();
  return async (path: string, params?: Params) => {
    const url = URLExt.join(settings.baseUrl, URL_PREFIX, path) + query(params);
    const resp = await ServerConnection.makeRequest(url, { cache: 'no-cache' }, settings);
    return readJson(resp as unknown as Response);
  };
}

/** POST `body` as JSON (the one write route: `api/config`); XSRF is added by ServerConnection. */
export async function postJson<T = unknown>(path: string, body: unknown): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, URL_PREFIX, path);
  const resp = await ServerConnection.makeRequest(
    url,
    { method: 'POST', cache: 'no-cache', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } },
    settings
  );
  return (await readJson(resp as unknown as Response)) as T;
}

/** One entry of `GET api/runs`: what discovery saw, without importing the run. */
export interface RunEntry {
  id: string;
  name: string;
  format: string;
  level: string | null;
  ranks: number[];
  rank_count: number;
  size_bytes: number;
  files: number;
  mtime: number;
  cached: boolean;
  cached_ranks: number;
  state: 'idle' | 'loading' | 'loaded' | 'error';
  /** doctor status: ok | warning | error from the notes and cached diagnostics; unchecked when never imported */
  status: 'ok' | 'warning' | 'error' | 'unchecked';
  counts: { info: number; warning: number; error: number };
  diagnostics: Diagnostic[];
}

export interface RunProblem {
  path: string;
  error: string;
  fix: string | null;
  kind: string;
}

export interface RunListing {
  runs: RunEntry[];
  problems: RunProblem[];
  truncated: boolean;
  scanned_at: number;
  elapsed_s: number;
}

/** The calls the JupyterLab side makes besides the viewer's own. */
export class LabApi extends Api {
  constructor(transport: Transport = jupyterTransport()) {
    super(transport);
  }
  /** The listing; `lang` gives the diagnostics' and problems' words in that language. */
  runs(params: { refresh?: boolean; under?: string; lang?: string } = {}): Promise<RunListing> {
    return this.call('api/runs', { refresh: params.refresh ? 1 : undefined, under: params.under, lang: params.lang });
  }
  resolve(path: string): Promise<{ id: string }> {
    return this.call('api/resolve', { path });
  }
  config(): Promise<{ cache_dir: string | null; cache_enabled: boolean; cache_from: string }> {
    return this.call('api/config');
  }
  setCacheDir(dir: string): Promise<{ cache_dir: string | null; cache_enabled: boolean; cache_from: string }> {
    return postJson('api/config', { cache_dir: dir });
  }
}
