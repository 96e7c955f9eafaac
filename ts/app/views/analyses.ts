/**
 * Analyses: every registered analysis, straight from the registry's own description
 * (`GET api/profiles/ID/analyses`: name, title, doc, params, chart).  A list on the left; the
 * chosen analysis's doc, a form built from its parameters (choices -> a select, bool -> a box,
 * int/float -> a number field, str -> a text field), the equivalent Python call, and its result
 * in the shared chart + table widget (the notebook renderer's), paged through the route's
 * `offset`/`limit`.  A new analysis appears here without viewer code.
 *
 * Address: `#PROFILE/analyses/NAME?PARAM=VALUE&offset=N&limit=N` (defaults left out).  The shell
 * keeps `#PROFILE/VIEW`; this view adds its part only while the address is the shell's (the
 * standalone page), never inside a host that owns the address (JupyterLab).
 */
import { append, clear, fmtNumber, h } from '../dom';
import type { AnalysisInfo, AnalysisPayload, Json, ParamInfo } from '../generated/wire';
import { empty, errorBox, loading } from '../widgets/parts';
import { AnalysisResult } from '../widgets/result';
import type { View, ViewContext } from './types';

/** Page sizes offered; the route answers at most the last one. */
export const PAGE_SIZES = [100, 500, 1000, 5000];
const DEFAULT_LIMIT = 5000;

/** What the view shows, as the address keeps it: parameter values are the form's text. */
export interface AnalysesState {
  name: string;
  params: Record<string, string>;
  offset: number;
  limit: number;
}

const enc = encodeURIComponent;

function blank(): AnalysesState {
  return { name: '', params: {}, offset: 0, limit: DEFAULT_LIMIT };
}

/** The address part after `#PROFILE/analyses`, for `s`. */
export function stateHash(s: AnalysesState): string {
  if (!s.name) {
    return '';
  }
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(s.params)) {
    q.append(k, v);
  }
  if (s.offset) {
    q.append('offset', String(s.offset));
  }
  if (s.limit !== DEFAULT_LIMIT) {
    q.append('limit', String(s.limit));
  }
  const qs = q.toString();
  return `/${enc(s.name)}${qs ? `?${qs}` : ''}`;
}

/** The state an address `hash` holds for profile `pid`, or null when the address is not this view's. */
export function parseHash(hash: string, pid: string): AnalysesState | null {
  const prefix = `#${enc(pid)}/analyses`;
  if (!hash.startsWith(prefix)) {
    return null;
  }
  const rest = hash.slice(prefix.length);
  if (!rest || rest === '/') {
    return blank();
  }
  if (!rest.startsWith('/')) {
    return null;
  }
  const [path, q = ''] = rest.slice(1).split('?');
  const s = blank();
  try {
    s.name = decodeURIComponent(path);
  } catch {
    return blank();
  }
  for (const [k, v] of new URLSearchParams(q)) {
    if (k === 'offset' || k === 'limit') {
      const n = Number(v);
      if (Number.isInteger(n) && n >= 0) {
        s[k] = k === 'limit' ? Math.min(Math.max(n, 1), DEFAULT_LIMIT) : n;
      }
    } else {
      s.params[k] = v;
    }
  }
  return s;
}

/**
 * Why `value` of parameter `name` makes a pair the analysis has no answer for, given the other
 * values in `chosen` (form text; a missing one is its default), or null when it is fine: the
 * registry's `requires` rules, read both ways (this value needs another parameter's value, or
 * another parameter's current value needs this one to be different).
 */
export function invalidPair(params: ParamInfo[], name: string, value: string, chosen: Record<string, string>): string | null {
  const current = (p: ParamInfo) => chosen[p.name] ?? text(p.default);
  for (const p of params) {
    for (const rule of p.requires || []) {
      const allowed = rule.allowed.map(text);
      // this parameter's value needs `rule.param` in `allowed`
      if (p.name === name && text(rule.value) === value) {
        const other = params.find(q => q.name === rule.param);
        if (other && !allowed.includes(current(other))) {
          return `${name}=${value} needs ${rule.param} = ${allowed.join(' | ')}`;
        }
      }
      // another parameter's current value needs this one in `allowed`
      if (rule.param === name && current(p) === text(rule.value) && !allowed.includes(value)) {
        return `${p.name}=${current(p)} needs ${name} = ${allowed.join(' | ')}`;
      }
    }
  }
  return null;
}

function same(a: AnalysesState, b: AnalysesState): boolean {
  return stateHash(a) === stateHash(b);
}

/** A docstring as paragraphs (the registration keeps its source indentation). */
function paragraphs(doc: string): string[] {
  return doc
    .split(/\n\s*\n/)
    .map(p => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

/** A doc paragraph as nodes: ``literal`` (reST) and `literal` become code, the rest text. */
function docNodes(text: string): (Node | string)[] {
  const out: (Node | string)[] = [];
  const re = /``(.+?)``|`([^`]+)`/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(text.slice(at, m.index), h('code', {}, m[1] ?? m[2]));
    at = m.index + m[0].length;
  }
  out.push(text.slice(at));
  return out.filter(x => x !== '');
}

/** The doc of an analysis: its first paragraph, the rest behind "more". */
function docBlock(doc: string, more: string): HTMLElement {
  const [first, ...rest] = paragraphs(doc);
  return h(
    'div',
    { class: 'pi-an-doc' },
    first ? h('p', {}, docNodes(first)) : null,
    rest.length
      ? h('details', { class: 'pi-an-more' }, h('summary', {}, more), rest.map(p => h('p', {}, docNodes(p))))
      : null
  );
}

/** A parameter value as Python writes it (the call shown under the form). */
function pyValue(p: ParamInfo | undefined, v: string): string {
  if (p && (p.type === 'int' || p.type === 'float') && v !== '' && Number.isFinite(Number(v))) {
    return v;
  }
  if (p && p.type === 'bool') {
    return ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()) ? 'True' : 'False';
  }
  return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function text(v: Json): string {
  return v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function create(): View {
  let result: AnalysisResult | null = null;
  let onHash: (() => void) | null = null;
  let writeHash: (() => void) | null = null;
  let shown = false;
  return {
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const pid = ctx.profile.id;
      // read before the shell rewrites the address to `#PROFILE/analyses` (it does so as soon
      // as this call returns: mount runs synchronously up to its first await)
      const owned = () => location.hash.startsWith(`#${enc(pid)}/`);
      let state: AnalysesState = parseHash(location.hash, pid) || blank();
      let infos: AnalysisInfo[] = [];
      let seq = 0;

      const list = h('nav', { class: 'pi-an-list', 'aria-label': t('ui.analyses.list') });
      const main = h('div', { class: 'pi-an-main' });
      append(el, [h('div', { class: 'pi-an' }, list, main)]);

      writeHash = () => {
        if (owned()) {
          const want = `#${enc(pid)}/analyses${stateHash(state)}`;
          if (location.hash !== want) {
            history.replaceState(null, '', want);
          }
        }
      };

      const renderList = () => {
        clear(list);
        list.appendChild(h('div', { class: 'pi-an-list-title' }, t('ui.analyses.list')));
        for (const a of infos) {
          list.appendChild(
            h(
              'button',
              {
                class: `pi-an-item${a.name === state.name ? ' pi-active' : ''}`,
                'data-name': a.name,
                title: paragraphs(a.doc)[0] || a.title,
                'aria-current': a.name === state.name ? 'true' : null,
                onclick: () => choose({ ...blank(), name: a.name, limit: state.limit })
              },
              h('span', { class: 'pi-an-item-title' }, a.title || a.name),
              h('span', { class: 'pi-an-item-name' }, a.name)
            )
          );
        }
      };

      /** One form control per parameter; null for a type the form cannot write (a dict). */
      const control = (p: ParamInfo, onChange: (v: string) => void, rules: ParamInfo[] | null = null): HTMLElement | null => {
        const value = state.params[p.name];
        const dflt = text(p.default);
        const attrs = { class: 'pi-an-param', 'data-param': p.name, 'aria-label': p.name };
        const known: Record<string, number[]> = { rank: ctx.profile.ranks, step: ctx.profile.steps };
        let input: HTMLSelectElement | HTMLInputElement;
        if (p.choices || (p.type === 'int' && p.default === null && known[p.name]?.length)) {
          const options = p.choices ? p.choices.map(text) : known[p.name].map(String);
          const sel = h('select', attrs);
          if (p.default === null || !options.includes(dflt)) {
            sel.appendChild(h('option', { value: '' }, p.choices ? t('ui.analyses.default') : t('ui.analyses.all')));
          }
          for (const o of options) {
            // a value that makes a pair the analysis cannot answer is offered disabled, with why
            const why = rules ? invalidPair(rules, p.name, o, state.params) : null;
            sel.appendChild(
              h('option', { value: o, disabled: !!why, title: why }, o === dflt && p.choices ? `${o} (${t('ui.analyses.default')})` : o)
            );
          }
          sel.value = value ?? (options.includes(dflt) ? dflt : '');
          sel.addEventListener('change', () => onChange(sel.value === dflt ? '' : sel.value));
          input = sel;
        } else if (p.type === 'bool') {
          const box = h('input', { ...attrs, type: 'checkbox' });
          const on = (v: string) => ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());
          box.checked = value !== undefined ? on(value) : p.default === true;
          box.addEventListener('change', () => onChange(box.checked === (p.default === true) ? '' : String(box.checked)));
          input = box;
        } else if (p.type === 'int' || p.type === 'float' || p.type === 'str') {
          const numeric = p.type !== 'str';
          const field = h('input', {
            ...attrs,
            type: numeric ? 'number' : 'text',
            step: p.type === 'int' ? 1 : numeric ? 'any' : null,
            placeholder: dflt || t('ui.analyses.default'),
            class: `pi-an-param ${numeric ? 'pi-an-num' : 'pi-an-text'}`
          });
          field.value = value ?? '';
          field.addEventListener('change', () => onChange(field.value.trim() === dflt ? '' : field.value.trim()));
          input = field;
        } else {
          return h(
            'span',
            { class: 'pi-control pi-an-fixed', title: p.help || null },
            h('span', {}, p.name),
            h('em', {}, t('ui.analyses.python_only'))
          );
        }
        return h('label', { class: 'pi-control', title: p.help || null }, h('span', {}, p.name), input);
      };

      const renderMain = () => {
        result?.dispose();
        result = null;
        clear(main);
        if (!state.name) {
          main.appendChild(empty(t('ui.analyses.choose')));
          return;
        }
        const info = infos.find(a => a.name === state.name);
        if (!info) {
          main.appendChild(empty(t('ui.analyses.unknown', { name: state.name })));
          return;
        }
        const form = h('div', { class: 'pi-controls pi-an-form' });
        for (const p of info.params) {
          const c = control(
            p,
            v => {
            const params = { ...state.params };
            if (v === '') {
              delete params[p.name];
            } else {
              params[p.name] = v;
            }
            choose({ ...state, params, offset: 0 });
            },
            info.params
          );
          if (c) {
            form.appendChild(c);
          }
        }
        if (info.params.length) {
          form.appendChild(
            h('button', { class: 'pi-an-reset', onclick: () => choose({ ...blank(), name: state.name, limit: state.limit }) }, t('ui.analyses.reset'))
          );
        }
        const byName = new Map(info.params.map(p => [p.name, p]));
        const args = Object.entries(state.params)
          .map(([k, v]) => `${k}=${pyValue(byName.get(k), v)}`)
          .join(', ');
        const out = h('div', { class: 'pi-an-result', 'data-state': 'loading' });
        append(main, [
          h('h2', { class: 'pi-an-title' }, info.title || info.name, ' ', h('code', { class: 'pi-an-name' }, info.name)),
          docBlock(info.doc, t('ui.analyses.more')),
          info.params.length
            ? h('div', { class: 'pi-an-params' }, h('div', { class: 'pi-an-label' }, t('ui.analyses.params')), form)
            : h('div', { class: 'pi-note' }, t('ui.analyses.no_params')),
          h(
            'div',
            { class: 'pi-an-call' },
            h('span', { class: 'pi-an-label' }, t('ui.analyses.python')),
            h('code', {}, `p.${info.name}(${args})`)
          ),
          out
        ]);
        void run(out);
      };

      const pager = (p: AnalysisPayload): HTMLElement | null => {
        const offset = p.offset ?? 0;
        const limit = p.limit ?? state.limit;
        const total = p.total_rows;
        if (total <= PAGE_SIZES[0] && offset === 0) {
          return null;
        }
        const from = total ? Math.min(offset + 1, total) : 0;
        const to = Math.min(offset + p.rows.length, total);
        const go = (o: number) => choose({ ...state, offset: Math.max(0, o) });
        const prev = h('button', { class: 'pi-an-prev', onclick: () => go(offset - limit) }, t('ui.analyses.prev'));
        prev.disabled = offset === 0;
        const next = h('button', { class: 'pi-an-next', onclick: () => go(offset + limit) }, t('ui.analyses.next'));
        next.disabled = offset + limit >= total;
        const size = h('select', { class: 'pi-an-limit', 'aria-label': t('ui.analyses.page_size') });
        for (const n of PAGE_SIZES.includes(limit) ? PAGE_SIZES : [...PAGE_SIZES, limit].sort((a, b) => a - b)) {
          size.appendChild(h('option', { value: n }, fmtNumber(n)));
        }
        size.value = String(limit);
        // keep the first row of this page on the new page
        size.addEventListener('change', () => {
          const n = Number(size.value);
          choose({ ...state, limit: n, offset: Math.floor(offset / n) * n });
        });
        return h(
          'div',
          { class: 'pi-controls pi-an-pager' },
          prev,
          h(
            'span',
            { class: 'pi-an-range' },
            t('ui.analyses.rows', { from: fmtNumber(from), to: fmtNumber(to), total: fmtNumber(total) })
          ),
          next,
          h('label', { class: 'pi-control' }, h('span', {}, t('ui.analyses.page_size')), size),
          h('span', { class: 'pi-note' }, t('ui.analyses.page_note'))
        );
      };

      const run = async (out: HTMLElement) => {
        const mine = ++seq;
        const asked = { ...state };
        clear(out);
        out.appendChild(loading(t));
        try {
          const p = await ctx.api.analysis(pid, asked.name, asked.params, { offset: asked.offset, limit: asked.limit });
          if (mine !== seq) {
            return;
          }
          result?.dispose();
          result = new AnalysisResult(p, { t, capNote: false });
          clear(out);
          const bar = pager(p);
          append(out, [bar, result.el]);
          out.setAttribute('data-state', 'ready');
          out.setAttribute('data-analysis', asked.name);
          out.setAttribute('data-offset', String(p.offset ?? 0));
          out.setAttribute('data-total', String(p.total_rows));
        } catch (e) {
          if (mine !== seq) {
            return;
          }
          clear(out);
          out.appendChild(errorBox(e, t));
          out.setAttribute('data-state', 'error');
        }
      };

      const choose = (next: AnalysesState) => {
        const rerender = !same(next, state) || !main.firstChild;
        state = next;
        writeHash?.();
        if (rerender) {
          renderList();
          renderMain();
        }
      };

      // an edited address (or Back between two of this view's addresses) shows what it names
      onHash = () => {
        const s = parseHash(location.hash, pid);
        if (s && shown && !same(s, state)) {
          choose(s);
        }
      };
      window.addEventListener('hashchange', onHash);

      return (async () => {
        list.appendChild(loading(t));
        try {
          infos = (await ctx.api.analyses(pid)).analyses;
        } catch (e) {
          clear(list);
          list.appendChild(errorBox(e, t));
          return;
        }
        renderList();
        renderMain();
      })();
    },
    show() {
      shown = true;
      // after the shell has written `#PROFILE/analyses` for this visit
      setTimeout(() => shown && writeHash?.(), 0);
    },
    hide() {
      shown = false;
    },
    dispose() {
      result?.dispose();
      if (onHash) {
        window.removeEventListener('hashchange', onHash);
      }
    }
  };
}
