/**
 * DOM helpers.  Every text that comes from a profile (op names, paths, args) goes through
 * `textContent`, never `innerHTML`, so a crafted op name renders as text.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** `h('div', {class: 'x', onclick: fn}, 'text', child)`: an element built without HTML parsing. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) {
      continue;
    }
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v as EventListener);
    } else if (v === true) {
      el.setAttribute(k, '');
    } else {
      el.setAttribute(k, String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild) {
    el.removeChild(el.firstChild);
  }
}

/** A duration in ns as the unit a person reads: 12.3 ms, 450 us, 80 ns. */
export function fmtDuration(ns: number): string {
  const a = Math.abs(ns);
  if (a >= 1e9) {
    return `${(ns / 1e9).toFixed(a >= 1e10 ? 2 : 3)} s`;
  }
  if (a >= 1e6) {
    return `${(ns / 1e6).toFixed(a >= 1e8 ? 1 : a >= 1e7 ? 2 : 3)} ms`;
  }
  if (a >= 1e3) {
    return `${(ns / 1e3).toFixed(a >= 1e5 ? 1 : a >= 1e4 ? 2 : 3)} us`;
  }
  return `${Math.round(ns)} ns`;
}

/** A number with thousands separators and at most `digits` decimals. */
export function fmtNumber(v: number, digits = 3): string {
  if (!Number.isFinite(v)) {
    return String(v);
  }
  return v.toLocaleString('en-US', { maximumFractionDigits: Number.isInteger(v) ? 0 : digits });
}

export function fmtBytes(b: number): string {
  const a = Math.abs(b);
  if (a >= 2 ** 30) {
    return `${(b / 2 ** 30).toFixed(2)} GiB`;
  }
  if (a >= 2 ** 20) {
    return `${(b / 2 ** 20).toFixed(1)} MiB`;
  }
  if (a >= 2 ** 10) {
    return `${(b / 2 ** 10).toFixed(1)} KiB`;
  }
  return `${b} B`;
}

/** The value of CSS variable `name` where `el` is (the page's or JupyterLab's theme), else `fallback`. */
export function cssVar(el: Element, name: string, fallback: string): string {
  const v = getComputedStyle(el).getPropertyValue(name).trim();
  return v || fallback;
}
