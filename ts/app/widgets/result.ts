/**
 * An analysis result as the user explores it: the chart its registration declares (bars, stacked
 * bars or lines) above a sortable, filterable table.  Built from the analysis payload alone
 * (`display.payload()`: columns, rows, chart spec), so the browser views and the notebook's
 * `application/vnd.profinsight.analysis+json` outputs share one component.
 */
import { clear, fmtNumber, h } from '../dom';
import type { AnalysisPayload, Json } from '../generated/wire';
import { barOption, Chart, esc } from './chart';
import { colLabel, fmtCell, isNum, Translate, tr } from './format';
import { DataTable, payloadTable } from './table';

export interface ResultOptions {
  t: Translate;
  /** hide these columns in the table (e.g. the chart's `label`) */
  hide?: string[];
  /** no chart */
  noChart?: boolean;
  chartHeight?: number;
  onSelect?: (row: Record<string, any>) => void;
  /** show the title line */
  title?: boolean;
  /** say "first N of M rows" when the payload holds part of the result (default true; a
   * caller that pages the result shows its own pager instead) */
  capNote?: boolean;
}

/** Numbers of a series, nulls kept (a gap, not a zero). */
function nums(rows: Record<string, any>[], col: string): (number | null)[] {
  return rows.map(r => (isNum(r[col]) ? r[col] : null));
}

/** The ECharts option of a payload's declared chart, or null when there is nothing to draw. */
export function chartOption(p: AnalysisPayload, t: Translate): any | null {
  const c = p.chart;
  if (!c || !p.rows.length) {
    return null;
  }
  const ys = c.y.filter(y => p.columns.includes(y));
  if (!ys.length) {
    return null;
  }
  const fmt = (col: string) => (v: number) => fmtCell(col, v);
  if (c.kind === 'line') {
    const series = new Map<string, { x: Json; y: number | null }[]>();
    const keys = c.series && c.series.length ? c.series : ['rank', 'component'].filter(k => p.columns.includes(k));
    for (const r of p.rows) {
      const prefix = keys.map(k => String(r[k] ?? '')).join(' ');
      for (const y of ys) {
        const name = `${prefix} ${colLabel(t, y)}`.trim();
        if (!series.has(name)) {
          series.set(name, []);
        }
        series.get(name)!.push({ x: r[c.x], y: isNum(r[y]) ? r[y] : null });
      }
    }
    return {
      animation: false,
      grid: { left: 8, right: 24, top: 36, bottom: 8, containLabel: true },
      legend: { type: 'scroll', top: 0 },
      tooltip: {
        trigger: 'axis',
        formatter: (ps: any[]) =>
          [esc(`${colLabel(t, c.x)} ${fmtCell(c.x, ps[0]?.value?.[0])}`)]
            .concat(ps.map(q => `${q.marker}${esc(q.seriesName)}: ${esc(fmtCell(ys[0], q.value?.[1]))}`))
            .join('<br/>')
      },
      xAxis: { type: 'value', name: colLabel(t, c.x), axisLabel: { formatter: fmt(c.x) } },
      yAxis: { type: 'value', axisLabel: { formatter: fmt(ys[0]) } },
      series: Array.from(series.entries()).map(([name, pts]) => ({
        type: 'line',
        name,
        showSymbol: false,
        connectNulls: false,
        data: pts.map(q => [q.x, q.y])
      }))
    };
  }
  const top = p.rows.slice(0, c.top || 15);
  const labels = top.map(r => String(r[c.x] ?? ''));
  const stacked = c.kind === 'stacked';
  const series = (stacked ? ys : ys.slice(0, 1)).map(y => ({ name: colLabel(t, y), values: nums(top, y) }));
  return barOption(labels, series, fmt(ys[0]), stacked);
}

export class AnalysisResult {
  readonly el: HTMLElement;
  readonly table: DataTable;
  private chart: Chart | null = null;

  constructor(
    readonly payload: AnalysisPayload,
    opts: ResultOptions
  ) {
    const t = opts.t;
    const p = payload;
    this.el = h('div', { class: 'pi-result' });
    if (opts.title) {
      const args = Object.entries(p.params || {})
        .map(([k, v]) => `${k}=${v}`)
        .join(', ');
      this.el.appendChild(
        h('div', { class: 'pi-result-title' }, p.title || p.analysis || '', args ? h('code', {}, ` ${args}`) : null)
      );
    }
    const option = opts.noChart ? null : chartOption(p, t);
    if (option) {
      const n = p.chart && p.chart.kind !== 'line' ? Math.min(p.rows.length, p.chart.top || 15) : 0;
      this.chart = new Chart(opts.chartHeight ?? (n ? Math.max(120, 40 + n * 22) : 260));
      this.el.appendChild(this.chart.el);
      this.chart.set(option);
    }
    const hide = opts.hide ?? ['label'];
    this.table = payloadTable(t, p, hide, { onSelect: opts.onSelect });
    this.el.appendChild(this.table.el);
    if (opts.capNote !== false && p.total_rows > p.rows.length) {
      this.el.appendChild(
        h(
          'div',
          { class: 'pi-note' },
          tr(t, 'ui.result.capped', `First ${fmtNumber(p.rows.length)} of ${fmtNumber(p.total_rows)} rows.`, {
            n: fmtNumber(p.rows.length),
            total: fmtNumber(p.total_rows)
          })
        )
      );
    }
    if (!p.rows.length) {
      clear(this.el);
      this.el.appendChild(h('div', { class: 'pi-empty' }, tr(t, 'ui.result.empty', 'This analysis found no rows.')));
    }
  }

  dispose(): void {
    this.chart?.dispose();
  }
}
