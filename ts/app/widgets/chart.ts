/**
 * Apache ECharts, tree-shaken to the charts the views draw, in a wrapper that follows the page's
 * light/dark colours: the theme is read from the --pi-* CSS variables (JupyterLab's theme
 * variables when inside the lab) and re-read when the colour scheme or the lab theme changes.
 * Tooltips are HTML in ECharts, so every tooltip goes through `esc()`.
 */
import { BarChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import {
  BrushComponent,
  DataZoomComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  MarkPointComponent,
  TooltipComponent,
  VisualMapComponent
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { cssVar, h } from '../dom';
import { displayName } from './format';

echarts.use([
  BarChart,
  LineChart,
  HeatmapChart,
  ScatterChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  VisualMapComponent,
  MarkPointComponent,
  MarkLineComponent,
  DataZoomComponent,
  BrushComponent,
  CanvasRenderer
]);

/** Series colours readable on light and dark backgrounds. */
export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Text made safe for an ECharts HTML tooltip. */
export function esc(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`);
}

function themeFor(el: Element): object {
  const fg = cssVar(el, '--pi-fg', '#1b1b1f');
  const fg2 = cssVar(el, '--pi-fg2', '#5f6368');
  const border = cssVar(el, '--pi-border', '#d0d0d5');
  const bg = cssVar(el, '--pi-bg', '#ffffff');
  const axis = {
    axisLine: { lineStyle: { color: border } },
    axisTick: { lineStyle: { color: border } },
    axisLabel: { color: fg2 },
    splitLine: { lineStyle: { color: border, opacity: 0.5 } },
    nameTextStyle: { color: fg2 }
  };
  return {
    color: PALETTE,
    backgroundColor: 'transparent',
    textStyle: { color: fg, fontFamily: cssVar(el, '--pi-font', 'sans-serif') },
    legend: { textStyle: { color: fg }, pageTextStyle: { color: fg2 } },
    tooltip: { backgroundColor: bg, borderColor: border, textStyle: { color: fg } },
    categoryAxis: axis,
    valueAxis: axis,
    logAxis: axis,
    timeAxis: axis,
    visualMap: { textStyle: { color: fg } }
  };
}

/** One chart in a box of fixed height; `set(option)` draws (and redraws on theme changes). */
export class Chart {
  readonly el: HTMLElement;
  private chart: echarts.ECharts | null = null;
  private option: any = null;
  private readonly resize: ResizeObserver;
  private readonly media: MediaQueryList | null;
  private readonly themeObserver: MutationObserver;
  private readonly onScheme = () => this.rebuild();

  constructor(height = 280, className = '') {
    this.el = h('div', { class: `pi-chart ${className}`, style: `height:${height}px` });
    this.resize = new ResizeObserver(() => {
      if (this.el.clientWidth > 0) {
        if (!this.chart && this.option) {
          this.rebuild();
        } else {
          this.chart?.resize();
        }
      }
    });
    this.resize.observe(this.el);
    this.media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
    this.media?.addEventListener('change', this.onScheme);
    // JupyterLab switches themes by attributes on <body>; the new theme's CSS variables can
    // arrive a little after the attribute, so look again until the colours settle
    this.themeObserver = new MutationObserver(() => this.followTheme());
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name', 'data-jp-theme-light'] });
  }

  set(option: any): void {
    this.option = option;
    if (!this.el.isConnected || this.el.clientWidth === 0) {
      return; // drawn by the resize observer once the box has a size
    }
    if (!this.chart) {
      this.rebuild();
    } else {
      this.chart.setOption(option, true);
      this.drawn.forEach(fn => fn(this.chart!));
    }
  }

  /** The ECharts instance (for event handlers), once drawn. */
  get instance(): echarts.ECharts | null {
    return this.chart;
  }

  private listeners: [string, (p: any) => void][] = [];
  private drawn: ((chart: echarts.ECharts) => void)[] = [];

  /** Runs `fn` after every draw (a new option, a theme rebuild): e.g. to switch the brush on. */
  onDraw(fn: (chart: echarts.ECharts) => void): void {
    this.drawn.push(fn);
    if (this.chart) {
      fn(this.chart);
    }
  }

  on(event: string, fn: (p: any) => void): void {
    this.listeners.push([event, fn]);
    this.chart?.on(event, fn);
  }

  private builtWith = '';

  /** Redraws now and, while the theme's colours are still changing, a few times after. */
  private followTheme(): void {
    this.rebuild();
    for (const ms of [150, 500, 1500]) {
      setTimeout(() => {
        if (this.themeKey() !== this.builtWith) {
          this.rebuild();
        }
      }, ms);
    }
  }

  private themeKey(): string {
    return ['--pi-fg', '--pi-fg2', '--pi-bg'].map(v => cssVar(this.el, v, '')).join('|');
  }

  private rebuild(): void {
    if (!this.option || !this.el.isConnected || this.el.clientWidth === 0) {
      return;
    }
    this.chart?.dispose();
    this.builtWith = this.themeKey();
    this.chart = echarts.init(this.el, themeFor(this.el), { renderer: 'canvas' });
    for (const [ev, fn] of this.listeners) {
      this.chart.on(ev, fn);
    }
    this.chart.setOption(this.option, true);
    this.drawn.forEach(fn => fn(this.chart!));
  }

  dispose(): void {
    this.resize.disconnect();
    this.themeObserver.disconnect();
    this.media?.removeEventListener('change', this.onScheme);
    this.chart?.dispose();
    this.chart = null;
  }
}

/** Axis ticks without padding zeros: 1.200 ms -> 1.2 ms, 30.00 ms -> 30 ms. */
export function trimZeros(s: string): string {
  return s.replace(/(\d)\.(\d*?)0+(?=\D|$)/, (_m, a, b) => (b ? `${a}.${b}` : a));
}

/** Horizontal bars (top N first, at the top) of `values` by `labels`; `fmt` formats values. */
export function barOption(
  labels: string[],
  series: { name: string; values: (number | null)[] }[],
  fmt: (v: number) => string,
  stacked = false
): any {
  return {
    animation: false,
    grid: { left: 8, right: 70, top: series.length > 1 ? 28 : 8, bottom: 8, containLabel: true },
    legend: series.length > 1 ? { top: 0, type: 'scroll' } : undefined,
    tooltip: {
      trigger: 'axis',
      axisPointer: { type: 'shadow' },
      formatter: (ps: any[]) =>
        [esc(ps[0]?.name)]
          .concat(ps.map(p => `${p.marker}${esc(p.seriesName)}: ${esc(p.value == null ? '' : fmt(p.value))}`))
          .join('<br/>')
    },
    xAxis: { type: 'value', axisLabel: { formatter: (v: number) => trimZeros(fmt(v)) } },
    yAxis: {
      type: 'category',
      inverse: true,
      data: labels.map(displayName),
      axisLabel: { width: 260, overflow: 'truncate' }
    },
    series: series.map(s => ({
      type: 'bar',
      name: s.name,
      data: s.values,
      stack: stacked ? 'total' : undefined,
      barMaxWidth: 22,
      emphasis: { focus: 'series' }
    }))
  };
}
