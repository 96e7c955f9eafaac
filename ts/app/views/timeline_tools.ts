/**
 * The Timeline view's tools around the canvas: the hover tooltip, the panel of a drag-selected
 * range (per-name statistics computed by the server: `timeline/stats`), and the marker list.
 * Every profile string is set as text, never parsed as markup.
 */
import { append, clear, fmtDuration, fmtNumber, h } from '../dom';
import type { StatsAnswer } from '../generated/wire';
import { DataTable } from '../widgets/table';

type T = (key: string, vars?: Record<string, string | number>) => string;

/** What the tooltip shows: a slice, or a bucket of merged sub-pixel slices. */
export interface TipContent {
  name: string;
  dur_ns: number;
  start_ns: number;
  track: string;
  /** slices a merged bucket stands for (1 for one slice) */
  count: number;
  /** the offset (ns) an alignment moved this slice's rank by; 0 or absent: none */
  shift?: number;
}

/** The hover tooltip: name, duration (formatted), start, track; follows the pointer. */
export class Tooltip {
  readonly el: HTMLElement;
  content: TipContent | null = null;

  constructor(private readonly t: T) {
    this.el = h('div', { class: 'pi-tl-tip', role: 'tooltip', hidden: true });
  }

  show(c: TipContent, clientX: number, clientY: number): void {
    this.content = c;
    const t = this.t;
    clear(this.el);
    append(this.el, [
      h('div', { class: 'pi-tl-tip-name' }, c.count > 1 ? t('ui.timeline.tip.merged', { n: c.count, name: c.name }) : c.name),
      h('div', { class: 'pi-tl-tip-dur' }, `${t(c.count > 1 ? 'ui.timeline.tip.extent' : 'ui.timeline.d.duration')}: ${fmtDuration(c.dur_ns)}`),
      h('div', { class: 'pi-tl-tip-at' }, `${t('ui.timeline.d.start')}: ${fmtDuration(c.start_ns)}`),
      h('div', { class: 'pi-tl-tip-track' }, c.track),
      c.shift
        ? h(
            'div',
            { class: 'pi-tl-tip-shift' },
            t('ui.timeline.tip.shifted', { offset: `${c.shift > 0 ? '+' : '−'}${fmtDuration(Math.abs(c.shift))}` })
          )
        : null
    ]);
    this.el.hidden = false;
    const host = this.el.offsetParent as HTMLElement | null;
    const box = host ? host.getBoundingClientRect() : { left: 0, top: 0, width: window.innerWidth, height: window.innerHeight };
    let x = clientX - box.left + 14;
    let y = clientY - box.top + 16;
    const w = this.el.offsetWidth;
    const hh = this.el.offsetHeight;
    if (x + w > box.width) {
      x = Math.max(0, clientX - box.left - w - 10);
    }
    if (y + hh > box.height) {
      y = Math.max(0, clientY - box.top - hh - 10);
    }
    this.el.style.left = `${x}px`;
    this.el.style.top = `${y}px`;
  }

  hide(): void {
    this.content = null;
    this.el.hidden = true;
  }
}

export interface RangePanelOptions {
  t: T;
  onClose: () => void;
  onZoom: () => void;
  /** a name's row was clicked: search it on the timeline */
  onName: (name: string) => void;
}

/** The panel of a selected range: its span, slice count and the per-name statistics table. */
export function renderRange(el: HTMLElement, r: StatsAnswer | { error: string } | null, span: { start: number; end: number }, o: RangePanelOptions): void {
  const t = o.t;
  clear(el);
  el.hidden = false;
  el.classList.add('pi-tl-range-panel');
  const close = t('ui.timeline.close');
  append(el, [
    h(
      'div',
      { class: 'pi-tl-details-head' },
      h('span', { class: 'pi-tl-details-title' }, t('ui.timeline.range.title', { span: fmtDuration(span.end - span.start) })),
      h('button', { class: 'pi-tl-btn pi-tl-range-zoom', onclick: o.onZoom }, t('ui.timeline.range.zoom')),
      h('button', { class: 'pi-tl-close', title: close, 'aria-label': close, onclick: o.onClose }, '×')
    ),
    h('div', { class: 'pi-tl-sub' }, `${fmtDuration(span.start)} → ${fmtDuration(span.end)}`)
  ]);
  if (!r) {
    el.appendChild(h('div', { class: 'pi-tl-range-wait' }, t('ui.timeline.range.computing')));
    return;
  }
  if ('error' in r) {
    el.appendChild(h('div', { class: 'pi-error-message' }, r.error));
    return;
  }
  el.appendChild(
    h(
      'div',
      { class: 'pi-tl-range-summary' },
      t('ui.timeline.range.summary', {
        count: fmtNumber(r.count, 0),
        names: fmtNumber(r.names_total, 0),
        tracks: fmtNumber(r.tracks, 0),
        total: fmtDuration(r.total_ns)
      })
    )
  );
  const ns = (v: number) => fmtDuration(v);
  const table = new DataTable({
    t,
    rows: r.names as unknown as Record<string, unknown>[] as Record<string, any>[],
    filter: true,
    pageSize: 100,
    className: 'pi-tl-range-table',
    sort: { key: 'total_ns', desc: true },
    onSelect: row => o.onName(String(row.name)),
    columns: [
      { key: 'name', label: t('ui.timeline.range.name') },
      { key: 'count', label: t('ui.timeline.range.count'), numeric: true, format: v => fmtNumber(v, 0) },
      { key: 'total_ns', label: t('ui.timeline.range.total'), numeric: true, format: ns },
      { key: 'self_ns', label: t('ui.timeline.range.self'), numeric: true, format: ns },
      { key: 'avg_ns', label: t('ui.timeline.range.avg'), numeric: true, format: ns },
      { key: 'min_ns', label: t('ui.timeline.range.min'), numeric: true, format: ns },
      { key: 'max_ns', label: t('ui.timeline.range.max'), numeric: true, format: ns }
    ]
  });
  el.appendChild(table.el);
  if (r.names_total > r.names.length) {
    el.appendChild(h('div', { class: 'pi-tl-sub' }, t('ui.timeline.range.more', { shown: r.names.length, total: r.names_total })));
  }
}

/**
 * The marker list in the toolbar: "⚑1 3.2 ms · ⚑2 +1.1 ms" (each a button that centres the
 * window on its marker, as the vendor's flag list jumps) and a clear button.
 */
export function renderMarkers(el: HTMLElement, markers: number[], t: T, onClear: () => void, onJump: (ns: number) => void): void {
  clear(el);
  if (!markers.length) {
    el.hidden = true;
    return;
  }
  el.hidden = false;
  const list = h('span', { class: 'pi-tl-marker-list', title: t('ui.timeline.markers.help') });
  markers.forEach((m, i) => {
    if (i) {
      list.appendChild(document.createTextNode(' · '));
    }
    const text = i === 0 ? `⚑1 ${fmtDuration(m)}` : `⚑${i + 1} +${fmtDuration(m - markers[i - 1])}`;
    list.appendChild(h('button', { class: 'pi-tl-marker', 'data-marker': String(i + 1), onclick: () => onJump(m) }, text));
  });
  append(el, [list, h('button', { class: 'pi-tl-btn pi-tl-markers-clear', title: t('ui.timeline.markers.clear'), onclick: onClear }, '⌫')]);
}
