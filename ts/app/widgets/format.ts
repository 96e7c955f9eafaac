/**
 * Cell formatting by column-name convention (CONTRACT.md: `*_us` microseconds, `*_ratio` fractions,
 * `*_bytes` bytes, `*_ns` absolute nanoseconds ...), so any analysis renders with units without a
 * per-analysis table of formats.  Used by the views and by the notebook renderer alike.
 */
import { fmtBytes, fmtDuration, fmtNumber } from '../dom';

export type Translate = (key: string, vars?: Record<string, string | number>) => string;

/** A translation function that falls back to `fallback` when the catalogue lacks `key`. */
export function tr(t: Translate, key: string, fallback: string, vars?: Record<string, string | number>): string {
  const s = t(key, vars);
  return s === key ? fallback : s;
}

export function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** Microseconds as a readable duration. */
export function fmtUs(us: number | null | undefined): string {
  return isNum(us) ? fmtDuration(us * 1e3) : '';
}

export function fmtPct(ratio: number | null | undefined, digits = 1): string {
  return isNum(ratio) ? `${(ratio * 100).toFixed(digits)}%` : '';
}

/** Signed duration (+1.2 ms / -3.4 ms) for deltas. */
export function fmtDeltaUs(us: number | null | undefined): string {
  if (!isNum(us)) {
    return '';
  }
  const s = fmtDuration(us * 1e3);
  return us > 0 ? `+${s}` : s;
}

/** The unit a column's values carry, from its name. */
export function unitOf(col: string): string {
  if (col.endsWith('_us') || col === 't_ms' || col.endsWith('_ms')) {
    return 'time';
  }
  if (col.endsWith('_ratio')) {
    return 'ratio';
  }
  if (col.endsWith('_bytes') || col === 'bytes') {
    return 'bytes';
  }
  if (col.endsWith('_mib')) {
    return 'mib';
  }
  if (col.endsWith('_gbps')) {
    return 'gbps';
  }
  if (col.endsWith('_ns')) {
    return 'ns';
  }
  if (col.endsWith('_x')) {
    return 'times';
  }
  return '';
}

/**
 * A name as a person reads it: HCCL writes collective types with a trailing underscore
 * (`hcom_allReduce_`), an artefact of how it builds names, not part of the name.  Data (CSV
 * exports, filters on the server) keeps the raw name.
 */
export function displayName(v: unknown): string {
  const s = String(v ?? '');
  // also after a chart label's `rank N ` prefix
  return /(^|\s)hcom_[A-Za-z0-9]+_$/.test(s) ? s.slice(0, -1) : s;
}

/** A cell as text: numbers with units, objects as compact JSON, nothing for null. */
export function fmtCell(col: string, v: unknown): string {
  if (v === null || v === undefined) {
    return '';
  }
  if (typeof v === 'object') {
    const s = JSON.stringify(v);
    return s.length > 240 ? s.slice(0, 240) + ' …' : s;
  }
  if (typeof v !== 'number') {
    return displayName(v);
  }
  if (!Number.isFinite(v)) {
    return '';
  }
  switch (unitOf(col)) {
    case 'time':
      return col.endsWith('_ms') ? fmtDuration(v * 1e6) : fmtDuration(v * 1e3);
    case 'ratio':
      return fmtPct(v);
    case 'bytes':
      return fmtBytes(v);
    case 'mib':
      return `${fmtNumber(v, 1)} MiB`;
    case 'gbps':
      return `${fmtNumber(v, 2)} GB/s`;
    case 'ns':
      return String(v);
    case 'times':
      return `${fmtNumber(v, 2)}x`;
    default:
      return fmtNumber(v);
  }
}

/** A column header: the catalogue's `ui.col.<name>` label, else the analysis column name. */
export function colLabel(t: Translate, col: string): string {
  return tr(t, `ui.col.${col}`, col);
}

/** A cell as a number, or null when it holds none (a gap, not a zero). */
export function num(v: unknown): number | null {
  return isNum(v) ? v : null;
}

/** A cell as a label or message value: numbers stay numbers, null becomes '', the rest text. */
export function txt(v: unknown): string | number {
  return typeof v === 'number' ? v : v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * The glossary term (docs/glossary.md, `i18n/glossary.py`) each headline figure is an instance
 * of, by column name: its label shows the term's definition on hover, in the viewer's language.
 */
export const TERMS: Record<string, string> = {
  step_us: 'step',
  host_step_us: 'host_step',
  computing_us: 'compute',
  comm_us: 'communication',
  transit_us: 'transit',
  wait_us: 'wait',
  wait_other_us: 'wait',
  sync_us: 'wait',
  idle_us: 'comm_idle',
  overlapped_us: 'overlapped',
  comm_not_overlapped_us: 'not_overlapped',
  free_us: 'device_idle',
  busy_ratio: 'device_busy',
  preparing_us: 'host_preparing',
  cpu_run_ahead_us: 'cpu_run_ahead',
  recoverable_us: 'recoverable'
};

/** "term: definition" of glossary term `id` (for a title attribute), or null when unknown. */
export function termText(t: Translate, id: string | undefined): string | null {
  if (!id) {
    return null;
  }
  const def = t(`term.${id}.def`);
  return def === `term.${id}.def` ? null : `${t(`term.${id}`)}: ${def}`;
}
