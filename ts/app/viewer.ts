/**
 * The viewer shell, host-agnostic: a header (profile, views, language), a load-progress panel
 * and one pane per view.  `profinsight serve` mounts it on the whole page; JupyterLab mounts
 * it inside a tab with a Jupyter transport.  Views are created on first visit and kept, so the
 * timeline keeps its zoom when the user goes to Operators and back.
 */
import { Api, ApiError, LoadStatus, ProfileInfo, Transport } from './api';
import { append, clear, fmtBytes, h } from './dom';
import { defaultLang, Lang, Messages, saveLang } from './i18n';
import { buildHash, parseHash } from './link';
import { VIEWS } from './views';
import type { View, ViewContext, ViewSpec, ViewState } from './views/types';
import { diagnosticsBanner } from './widgets/diagnosticsBanner';
import type { Chart } from './widgets/chart';
import { firstPaint, readyRanks } from './widgets/firstPaint';
import { errorBox } from './widgets/parts';

export interface ViewerOptions {
  /** Open this profile (else the first served one). */
  profileId?: string;
  /** First view (default `overview`). */
  view?: string;
  /** Keep `#profile/view?state` in the page address (standalone page only; ./link.ts): views
   * and their state are history entries, so Back/Forward and edited or shared links work. */
  useHash?: boolean;
  /** Hide the profile picker (a JupyterLab tab shows one profile). */
  fixedProfile?: boolean;
  /** The state handed to the first view (a link's timeline window). */
  state?: ViewState;
}

/** What an address names (`#<profile id>/<view>?<state>`, the link format of ./link.ts), as the
 *  JupyterLab `?profinsight=` route and `profinsight mcp`'s viewer_link hand it over. */
export function parseAddress(hash: string): { id?: string; view?: string; state?: ViewState } {
  const link = parseHash(hash);
  return link ? { id: link.profile, view: link.view, state: link.state } : {};
}

interface Pane {
  spec: ViewSpec;
  view: View | null;
  el: HTMLElement;
}

export class Viewer {
  readonly api: Api;
  private msgs: Messages | null = null;
  private profiles: ProfileInfo[] = [];
  private profile: ProfileInfo | null = null;
  private panes = new Map<string, Pane>();
  private current: string | null = null;
  private readonly root: HTMLElement;
  private readonly header: HTMLElement;
  private readonly body: HTMLElement;
  private disposed = false;
  private banner: HTMLElement | null = null;
  /** the last state each view reported (ctx.setState), what its link carries */
  private states = new Map<string, ViewState>();
  /** true while a view's `show` runs (see show) */
  private showing = false;
  /** whether the view reported its state while it showed */
  private reported = false;
  private lastHash = '';
  /** the latest `open` call: an earlier one still loading when another starts paints nothing */
  private opening = 0;
  private readonly onHash = () => this.followHash();

  constructor(
    readonly host: HTMLElement,
    transport: Transport,
    readonly options: ViewerOptions = {}
  ) {
    this.api = new Api(transport);
    this.root = h('div', { class: 'pi-viewer' });
    this.header = h('div', { class: 'pi-header' });
    this.body = h('div', { class: 'pi-body' });
    append(this.root, [this.header, this.body]);
    host.appendChild(this.root);
  }

  get t() {
    return this.msgs ? this.msgs.t : (k: string) => k;
  }

  /** Loads labels, the profile list and the chosen profile; then shows the first view. */
  async start(lang: Lang = defaultLang()): Promise<void> {
    await this.setLang(lang, false);
    let id = this.options.profileId;
    let view = this.options.view;
    let state = this.options.state;
    if (this.options.useHash) {
      window.addEventListener('hashchange', this.onHash);
      const link = parseHash(location.hash);
      if (link) {
        id = link.profile || id;
        view = link.view || view;
        state = Object.keys(link.state).length ? link.state : state;
      }
    }
    if (!this.options.fixedProfile) {
      try {
        this.profiles = (await this.api.profiles()).profiles;
      } catch (e) {
        return this.fail(e);
      }
      if (!id && this.profiles.length) {
        id = this.profiles[0].id;
      }
    }
    if (!id) {
      this.renderHeader();
      clear(this.body);
      this.body.appendChild(h('div', { class: 'pi-empty' }, this.t('ui.no_profiles')));
      return;
    }
    await this.open(id, view || 'overview', state);
  }

  /** The address changed (Back/Forward, an edited or pasted link): show what it names. */
  private followHash(): void {
    if (location.hash === this.lastHash) {
      return;
    }
    const link = parseHash(location.hash);
    if (!link) {
      return;
    }
    this.lastHash = location.hash;
    if (!this.profile || link.profile !== this.profile.id) {
      void this.open(link.profile, link.view, link.state);
    } else {
      this.show(link.view, link.state, 'none');
    }
  }

  /** Writes the current view's link: a new history entry (`push`) or in place (`replace`). */
  private writeHash(how: 'push' | 'replace' | 'none'): void {
    if (!this.options.useHash || !this.profile || !this.current || how === 'none') {
      return;
    }
    const own = this.states.get(this.current);
    const here = parseHash(location.hash);
    if (!own && here && here.profile === this.profile.id && here.view === this.current) {
      this.lastHash = location.hash; // a view that keeps its own details in the address (Analyses)
      return;
    }
    const hash = buildHash(this.profile.id, this.current, own || {});
    if (hash === location.hash) {
      this.lastHash = hash;
      return;
    }
    if (how === 'push') {
      history.pushState(null, '', hash);
    } else {
      history.replaceState(null, '', hash);
    }
    this.lastHash = hash;
  }

  async setLang(lang: Lang, rerender = true): Promise<void> {
    this.msgs = await Messages.load(this.api, lang);
    saveLang(lang);
    this.root.setAttribute('lang', lang === 'zh' ? 'zh-CN' : 'en');
    if (rerender && this.profile) {
      const view = this.current || 'overview';
      try {
        this.profile = await this.api.profile(this.profile.id, lang); // the diagnostics in the new language
      } catch {
        /* keep the words already shown */
      }
      this.disposeViews();
      this.renderHeader();
      this.renderBanner();
      this.show(view, this.states.get(view), 'none');
    }
  }

  /** Opens profile `id`: shows load progress while the server imports it, then `view`. */
  async open(id: string, view = 'overview', state?: ViewState): Promise<void> {
    // a link followed while another run still loads (a rank's button, then Back at once) must
    // not be undone when that load ends: only the latest call paints and writes the address
    const call = ++this.opening;
    const stale = () => call !== this.opening || this.disposed;
    this.disposeViews();
    this.states.clear();
    this.profile = null;
    this.renderBanner();
    this.renderHeader(id);
    clear(this.body);
    const progress = h('div', { class: 'pi-loading', 'data-state': 'loading' });
    // the run from its own summaries, painted while the import runs (GET .../summary answers
    // beside the import, without parsing a trace)
    const early = h('div', { class: 'pi-first-paint', 'data-state': 'waiting' });
    this.body.appendChild(h('div', { class: 'pi-loading-page' }, progress, early));
    const started = performance.now();
    // a run the server has loaded already (a reload of the page, a second window) needs no first
    // paint: its summary of 1,024 ranks is 0.8 MB of JSON and 0.4 s of charts thrown away at once,
    // in front of the view asked for
    const first = await this.api.status(id).catch(() => null);
    if (stale()) {
      return;
    }
    let done = first !== null && first.state === 'loaded';
    const earlyCharts: Chart[] = [];
    const readyCharts: Chart[] = [];
    void (done ? Promise.reject(new Error('loaded')) : this.api.summary(id))
      .then(s => {
        if (!done && !stale()) {
          early.dataset.state = 'shown';
          early.dataset.ms = String(Math.round(performance.now() - started));
          append(early, [firstPaint(s, this.t, earlyCharts)]);
        }
      })
      .catch(() => {
        early.dataset.state = 'none'; // advisory: the import goes on
      });
    // a run of several ranks: each rank imported is painted from its own tasks while the rest import
    const ready = h('div', { class: 'pi-first-ready', 'data-ranks': '' });
    early.after(ready);
    let shownReady = 0;
    const poll = async () => {
      while (!done && !stale()) {
        try {
          const st = await this.api.status(id);
          if (!done) {
            this.renderProgress(progress, st, (performance.now() - started) / 1000);
          }
          const n = st.ranks_ready ? st.ranks_ready.length : 0;
          if (!done && st.total > 1 && n > shownReady && n < st.total) {
            shownReady = n;
            const r = await this.api.ready(id);
            if (!done && r.steps && r.ranks.length) {
              readyCharts.splice(0).forEach(c => c.dispose());
              clear(ready);
              ready.dataset.ranks = r.ranks.join(',');
              append(ready, [readyRanks(r, this.t, readyCharts)]);
            }
          }
        } catch {
          /* the status route is advisory */
        }
        await new Promise(r => setTimeout(r, 400));
      }
    };
    void poll();
    let loaded: ProfileInfo;
    try {
      loaded = await this.api.profile(id, this.msgs?.lang);
    } catch (e) {
      return stale() ? undefined : this.fail(e);
    } finally {
      done = true;
      earlyCharts.splice(0).forEach(c => c.dispose());
      readyCharts.splice(0).forEach(c => c.dispose());
    }
    if (stale()) {
      return;
    }
    this.profile = loaded;
    if (this.profile.error) {
      return this.fail(new ApiError(this.profile.error.error, 400, this.profile.error.fix));
    }
    this.renderHeader(id);
    this.renderBanner();
    clear(this.body);
    this.show(view, state, 'replace');
  }

  /** The open profile's load diagnostics as a banner between the header and the views. */
  private renderBanner(): void {
    this.banner?.remove();
    this.banner = this.profile ? diagnosticsBanner(this.profile.id, this.profile.diagnostics || [], this.t) : null;
    if (this.banner) {
      this.root.insertBefore(this.banner, this.body);
    }
  }

  /** Shows view `id` (creating it on first visit) and hands it `state`. */
  show(id: string, state?: ViewState, history: 'push' | 'replace' | 'none' = 'push'): void {
    if (!this.profile) {
      return;
    }
    const spec = VIEWS.find(v => v.id === id) || VIEWS[0];
    if (this.current && this.current !== spec.id) {
      const old = this.panes.get(this.current);
      if (old) {
        old.el.hidden = true;
        old.view?.hide?.();
      }
    }
    this.current = spec.id;
    if (state) {
      this.states.set(spec.id, { ...state, exact: undefined });
    }
    // a view that corrects the state it is handed (an invalid pair in a link) reports it while
    // it shows: that report is what the address gets, written once below (in place of a link
    // followed, which is otherwise left as it is)
    this.showing = true;
    this.reported = false;
    let pane = this.panes.get(spec.id);
    if (!pane) {
      const el = h('div', { class: `pi-pane pi-pane-${spec.id}`, 'data-view': spec.id });
      this.body.appendChild(el);
      pane = { spec, view: null, el };
      this.panes.set(spec.id, pane);
      const view = spec.create();
      pane.view = view;
      const ctx = this.context(spec.id);
      Promise.resolve(view.mount(el, ctx))
        .then(() => view.show?.(state))
        .catch(e => this.paneError(el, e));
    } else {
      try {
        pane.view?.show?.(state);
      } finally {
        this.showing = false;
      }
    }
    this.showing = false;
    pane.el.hidden = false;
    for (const tab of Array.from(this.header.querySelectorAll('.pi-tab'))) {
      tab.classList.toggle('pi-active', tab.getAttribute('data-view') === spec.id);
    }
    this.writeHash(history === 'none' && this.reported ? 'replace' : history);
  }

  dispose(): void {
    this.disposed = true;
    window.removeEventListener('hashchange', this.onHash);
    this.disposeViews();
    this.root.remove();
  }

  private context(spec: string): ViewContext {
    return {
      api: this.api,
      profile: this.profile!,
      t: this.t,
      lang: this.msgs ? this.msgs.lang : 'en',
      navigate: (view, state) => this.show(view, state),
      setState: state => {
        this.states.set(spec, state);
        this.reported = this.reported || this.showing;
        if (this.current === spec && !this.showing) {
          this.writeHash('replace');
        }
      }
    };
  }

  private disposeViews(): void {
    for (const pane of this.panes.values()) {
      try {
        pane.view?.dispose?.();
      } catch {
        /* keep going */
      }
      pane.el.remove();
    }
    this.panes.clear();
    this.current = null;
  }

  private renderHeader(id?: string): void {
    const t = this.t;
    clear(this.header);
    const brand = h('span', { class: 'pi-brand' }, 'profinsight');
    let picker: HTMLElement | null = null;
    if (!this.options.fixedProfile && this.profiles.length) {
      const sel = h('select', { class: 'pi-profile-picker', 'aria-label': t('ui.profile') });
      for (const p of this.profiles) {
        const o = h('option', { value: p.id }, p.id);
        if (p.id === (id || this.profile?.id)) {
          o.selected = true;
        }
        sel.appendChild(o);
      }
      sel.addEventListener('change', () => void this.open(sel.value, this.current || 'overview'));
      picker = sel;
    } else if (id) {
      picker = h('span', { class: 'pi-profile-name', title: this.profile?.path || id }, id);
    }
    const info = this.profile
      ? h(
          'span',
          { class: 'pi-profile-info' },
          `${this.profile.format}${this.profile.level ? ' ' + this.profile.level : ''} · ` +
            t('ui.ranks_steps', { ranks: this.profile.ranks.length, steps: this.profile.steps.length })
        )
      : null;
    const tabs = h('nav', { class: 'pi-tabs', role: 'tablist' });
    if (this.profile) {
      for (const v of VIEWS) {
        tabs.appendChild(
          h(
            'button',
            { class: 'pi-tab', role: 'tab', 'data-view': v.id, onclick: () => this.show(v.id) },
            t(v.label)
          )
        );
      }
    }
    const lang = h('select', { class: 'pi-lang', 'aria-label': 'language / 语言' });
    for (const [code, name] of [
      ['en', 'English'],
      ['zh', '中文']
    ]) {
      const o = h('option', { value: code }, name);
      o.selected = (this.msgs?.lang || 'en') === code;
      lang.appendChild(o);
    }
    lang.addEventListener('change', () => void this.setLang(lang.value as Lang));
    append(this.header, [brand, picker, info, this.diagnostics(), tabs, h('span', { class: 'pi-spacer' }), lang]);
  }

  /** What the import had to say (missing files, truncation, ...): counted in the header, listed on click. */
  private diagnostics(): HTMLElement | null {
    const diags = this.profile?.diagnostics || [];
    if (!diags.length) {
      return null;
    }
    const t = this.t;
    const count = (sev: string) => diags.filter(d => d.severity === sev).length;
    const parts = [
      count('error') ? t('ui.diag.errors', { n: count('error') }) : null,
      count('warning') ? t('ui.diag.warnings', { n: count('warning') }) : null,
      count('info') ? t('ui.diag.infos', { n: count('info') }) : null
    ].filter(Boolean);
    const worst = count('error') ? 'error' : count('warning') ? 'warning' : 'info';
    const list = h('ul', { class: 'pi-diag-list' });
    for (const d of diags) {
      list.appendChild(
        h(
          'li',
          { class: `pi-diag-${d.severity}` },
          h('span', { class: 'pi-diag-code' }, `${d.severity} · ${d.code}`),
          h('div', {}, d.message),
          d.file ? h('div', { class: 'pi-diag-file' }, d.file) : null,
          d.fix ? h('div', { class: 'pi-diag-fix' }, `${t('ui.fix')}: ${d.fix}`) : null
        )
      );
    }
    return h('details', { class: `pi-diag pi-diag-worst-${worst}` }, h('summary', {}, parts.join(' · ')), list);
  }

  private renderProgress(el: HTMLElement, st: LoadStatus, elapsed: number): void {
    const t = this.t;
    clear(el);
    // bytes when the server counts them (a 1 GB single-rank import moves long before its rank is done)
    const bytes = st.bytes_total > 0;
    const frac = bytes ? st.bytes_done / st.bytes_total : st.total > 0 ? st.done / st.total : null;
    const pct = frac === null ? null : Math.min(100, Math.round(100 * frac));
    const bar = h('div', { class: 'pi-progress' }, h('div', { class: 'pi-progress-fill', style: `width:${pct ?? 5}%` }));
    el.dataset.bytesDone = String(st.bytes_done ?? 0);
    el.dataset.bytesTotal = String(st.bytes_total ?? 0);
    el.dataset.stage = st.stage || '';
    append(el, [
      h('div', { class: 'pi-loading-title' }, t('ui.loading', { id: st.id })),
      bar,
      h(
        'div',
        { class: 'pi-loading-detail' },
        [
          st.stage ? t(`ui.stage.${st.stage}`, { file: st.file || '' }) : null,
          bytes ? t('ui.bytes_read', { done: fmtBytes(st.bytes_done), total: fmtBytes(st.bytes_total), pct: pct ?? 0 }) : null,
          st.total > 1 ? t('ui.ranks_done', { done: st.done, total: st.total }) : null,
          `${elapsed.toFixed(1)} s`
        ]
          .filter(Boolean)
          .join(' · ')
      ),
      st.total > 1 && st.ranks_ready && st.ranks_ready.length
        ? h('div', { class: 'pi-loading-ranks' }, t('ui.ranks_ready', { ranks: st.ranks_ready.join(', ') }))
        : null
    ]);
  }

  private fail(e: unknown): void {
    clear(this.body);
    this.body.appendChild(errorBox(e, this.t));
  }

  private paneError(el: HTMLElement, e: unknown): void {
    clear(el);
    el.appendChild(errorBox(e, this.t));
  }
}
