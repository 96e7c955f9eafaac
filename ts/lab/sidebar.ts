/**
 * The Profiles sidebar: every run under the Jupyter root as `GET api/runs` lists it (one entry
 * per run, whatever its rank count), with format, profiler level, ranks, size on disk and the
 * doctor status, plus the folders that look like profiles but cannot be read.  The listing
 * never imports a profile; "Scan again" asks the server to walk the root anew.
 *
 * Everything that comes from the server (names, paths, messages) is set with `textContent`
 * through `h()`, never as HTML, so a crafted folder name renders as text.
 */
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { refreshIcon } from '@jupyterlab/ui-components';
import { append, clear, fmtBytes, h } from '../app/dom';
import type { LoadStatus, SummaryAnswer } from '../app/generated/wire';
import { vendorCards } from '../app/widgets/firstPaint';
import { profinsightIcon } from './icon';
import { LabLabels } from './labels';
import { LabApi, RunEntry, RunListing } from './transport';

export class ProfilesSidebar extends Widget {
  private listing: RunListing | null = null;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private readonly titleEl: HTMLElement;
  private readonly refreshButton: HTMLButtonElement;
  private busy = false;
  private listedAt = 0;
  /** first paint and load progress of the runs opened from here (or found loading) */
  private summaries = new Map<string, SummaryAnswer | null>();
  private statuses = new Map<string, LoadStatus>();
  private polling = new Set<string>();

  constructor(
    private readonly api: LabApi,
    private readonly labels: LabLabels,
    private readonly openRun: (id: string) => void
  ) {
    super();
    this.id = 'profinsight-sidebar';
    this.addClass('jp-ProfinsightSidebar');
    this.title.icon = profinsightIcon;
    this.title.caption = 'profinsight: profiles';
    this.titleEl = h('span', { class: 'jp-ProfinsightSidebar-title' }, 'Profiles');
    this.refreshButton = h('button', {
      class: 'jp-ProfinsightSidebar-refresh jp-Button jp-mod-minimal jp-ToolbarButtonComponent',
      title: 'Scan again',
      'aria-label': 'Scan again',
      onclick: () => void this.refresh(true)
    });
    refreshIcon.element({ container: this.refreshButton, tag: 'span' });
    const header = h('div', { class: 'jp-ProfinsightSidebar-header' }, this.titleEl, this.refreshButton);
    this.status = h('div', { class: 'jp-ProfinsightSidebar-status', 'aria-live': 'polite' });
    this.body = h('div', { class: 'jp-ProfinsightSidebar-body' });
    append(this.node, [header, this.status, this.body]);
  }

  /**
   * Lists the runs when the sidebar is shown: the first time (not at start-up, the lab never waits
   * for a scan), and again when shown later, so the status of runs opened meanwhile is current
   * (the server keeps its scan; only "Scan again" walks the root anew).
   */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (!this.busy && (!this.listing || Date.now() - this.listedAt > 5000)) {
      void this.refresh(false);
    }
  }

  get runs(): RunEntry[] {
    return this.listing ? this.listing.runs : [];
  }

  /** Lists the runs again; `rescan` makes the server walk the root anew (else its kept scan). */
  async refresh(rescan = false): Promise<void> {
    if (this.busy) {
      return;
    }
    this.busy = true;
    const t = this.labels.t;
    this.node.setAttribute('data-state', 'loading');
    this.refreshButton.disabled = true;
    try {
      await this.labels.ready();
      this.titleEl.textContent = t('ui.lab.title');
      this.refreshButton.title = t('ui.lab.refresh');
      if (!this.listing || rescan) {
        this.status.textContent = t('ui.lab.scanning');
      }
      this.listing = await this.api.runs({ refresh: rescan, lang: this.labels.lang });
      this.listedAt = Date.now();
      this.render();
      this.node.setAttribute('data-state', 'ready');
    } catch (e) {
      clear(this.body);
      this.status.textContent = '';
      const msg = e instanceof Error ? e.message : String(e);
      this.body.appendChild(h('div', { class: 'jp-ProfinsightSidebar-error', role: 'alert' }, msg));
      this.node.setAttribute('data-state', 'error');
    } finally {
      this.busy = false;
      this.refreshButton.disabled = false;
    }
  }

  private render(): void {
    const t = this.labels.t;
    const listing = this.listing!;
    clear(this.body);
    this.status.textContent = t('ui.lab.count', { n: listing.runs.length, s: listing.elapsed_s.toFixed(2) });
    if (listing.truncated) {
      this.body.appendChild(h('div', { class: 'jp-ProfinsightSidebar-note' }, t('ui.lab.truncated')));
    }
    if (!listing.runs.length) {
      this.body.appendChild(h('div', { class: 'jp-ProfinsightSidebar-empty' }, t('ui.lab.empty')));
    }
    const list = h('ul', { class: 'jp-ProfinsightSidebar-runs', role: 'list' });
    for (const run of listing.runs) {
      list.appendChild(this.item(run));
    }
    this.body.appendChild(list);
    if (listing.problems.length) {
      const items = listing.problems.map(p =>
        h(
          'li',
          { class: 'jp-ProfinsightSidebar-problem' },
          h('div', { class: 'jp-ProfinsightSidebar-path' }, p.path),
          h('div', {}, p.error),
          p.fix ? h('div', { class: 'jp-ProfinsightSidebar-fix' }, p.fix) : null
        )
      );
      this.body.appendChild(
        h(
          'details',
          { class: 'jp-ProfinsightSidebar-problems' },
          h('summary', {}, t('ui.lab.problems', { n: listing.problems.length })),
          h('ul', {}, items)
        )
      );
    }
  }

  private item(run: RunEntry): HTMLElement {
    const t = this.labels.t;
    const slash = run.id.lastIndexOf('/');
    const folder = slash > 0 ? run.id.slice(0, slash + 1) : '';
    const meta = [
      run.format.replace('ascend_', 'ascend '),
      run.level,
      t('ui.lab.ranks', { n: run.rank_count }),
      fmtBytes(run.size_bytes)
    ]
      .filter(Boolean)
      .join(' · ');
    const statusText =
      run.status === 'error'
        ? t('ui.lab.status.error', { n: run.counts.error })
        : run.status === 'warning'
          ? t('ui.lab.status.warning', { n: run.counts.warning })
          : t(`ui.lab.status.${run.status}`);
    const tip = run.diagnostics
      .filter(d => d.severity !== 'info')
      .slice(0, 8)
      .map(d => `${d.severity}: ${d.message}`)
      .join('\n');
    const badges = h(
      'div',
      { class: 'jp-ProfinsightSidebar-badges' },
      h('span', { class: `jp-ProfinsightSidebar-status-badge pi-status-${run.status}`, title: tip || statusText }, statusText),
      run.state === 'loading' ? h('span', { class: 'jp-ProfinsightSidebar-tag' }, t('ui.lab.loading')) : null,
      run.cached && run.state !== 'loaded' ? h('span', { class: 'jp-ProfinsightSidebar-tag' }, t('ui.lab.cached')) : null
    );
    const open = () => {
      this.openRun(run.id);
      void this.track(run.id);
    };
    if (run.state === 'loading') {
      void this.track(run.id);
    }
    const li = h(
      'li',
      {
        class: 'jp-ProfinsightSidebar-run',
        'data-id': run.id,
        'data-status': run.status,
        'data-ranks': run.rank_count,
        tabindex: 0,
        role: 'button',
        title: `${run.id}\n${meta}${tip ? '\n' + tip : ''}`,
        onclick: open,
        onkeydown: ((ev: KeyboardEvent) => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            open();
          }
        }) as EventListener
      },
      h(
        'div',
        { class: 'jp-ProfinsightSidebar-name' },
        folder ? h('span', { class: 'jp-ProfinsightSidebar-folder' }, folder) : null,
        h('span', { class: 'jp-ProfinsightSidebar-leaf' }, run.id === ':root' ? run.name : run.id.slice(slash + 1))
      ),
      h('div', { class: 'jp-ProfinsightSidebar-meta' }, meta),
      badges,
      this.progressLine(run.id)
    );
    return li;
  }

  /**
   * While a run opened from here imports: its summary (from the profiler's own summaries, at
   * once) and the bytes read so far, under its entry, until the import ends.
   */
  async track(id: string): Promise<void> {
    if (this.polling.has(id)) {
      return;
    }
    this.polling.add(id);
    try {
      if (!this.summaries.has(id)) {
        void this.api
          .summary(id)
          .then(s => this.summaries.set(id, s))
          .catch(() => this.summaries.set(id, null))
          .finally(() => this.updateProgress(id));
      }
      for (let i = 0; i < 3600; i++) {
        const st = await this.api.status(id);
        this.statuses.set(id, st);
        this.updateProgress(id);
        if (st.state === 'loaded' || st.state === 'error' || (st.state === 'idle' && i > 20)) {
          break;
        }
        await new Promise(r => setTimeout(r, 700));
      }
    } catch {
      /* advisory */
    } finally {
      this.polling.delete(id);
    }
  }

  private updateProgress(id: string): void {
    const li = Array.from(this.body.querySelectorAll('.jp-ProfinsightSidebar-run')).find(el => (el as HTMLElement).dataset.id === id);
    if (!li) {
      return;
    }
    li.querySelector('.jp-ProfinsightSidebar-progress')?.remove();
    const line = this.progressLine(id);
    if (line) {
      li.appendChild(line);
    }
  }

  private progressLine(id: string): HTMLElement | null {
    const t = this.labels.t;
    const s = this.summaries.get(id);
    const st = this.statuses.get(id);
    if (!s && !st) {
      return null;
    }
    const parts: string[] = [];
    if (s && s.vendor) {
      const c = vendorCards(t, s.vendor.steps.rows);
      if (c.length) {
        parts.push(`${t('ui.overview.step_time')} ${c[0].value} · ${t('ui.overview.computing')} ${c[1].value} (${t('ui.lab.vendor')})`);
      }
    }
    if (st && st.state === 'loading') {
      const pct = st.bytes_total > 0 ? Math.round((100 * st.bytes_done) / st.bytes_total) : 0;
      parts.push(
        [st.stage ? t(`ui.stage.${st.stage}`, { file: st.file || '' }) : null, st.bytes_total > 0 ? t('ui.bytes_read', { done: fmtBytes(st.bytes_done), total: fmtBytes(st.bytes_total), pct }) : null]
          .filter(Boolean)
          .join(' · ')
      );
    }
    if (!parts.length) {
      return null;
    }
    return h(
      'div',
      { class: 'jp-ProfinsightSidebar-progress', 'data-state': st ? st.state : 'idle', 'data-bytes-done': st ? st.bytes_done : 0 },
      parts.map(p => h('div', {}, p))
    );
  }
}
