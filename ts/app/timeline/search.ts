/**
 * Search by name on the timeline: the first 1000 hits in time order, Enter / Shift+Enter (or the
 * arrows) step through them, each hit zoomed to and selected.
 */
import type { TimelineData } from './data';
import type { Mark } from './renderer';

export class TimelineSearch {
  hits: Mark[] = [];
  total = 0;
  index = -1;
  private lastQuery = '';

  /** The query whose hits are held ('' when none), for the page address. */
  get query(): string {
    return this.lastQuery;
  }

  /** `label` shows progress and position; `go` zooms to and selects a hit. */
  constructor(
    private readonly data: TimelineData,
    private readonly label: HTMLElement,
    private readonly t: (key: string, vars?: Record<string, string | number>) => string,
    private readonly go: (hit: Mark) => void
  ) {}

  /**
   * Runs `q` (again only when it changed), then steps `dir` (1 or -1) through the hits; with
   * `within` (relative ns) the step lands on the first hit that overlaps it (a range's name: its
   * first slice in the range, as the vendor's "More" list does).
   */
  async run(q: string, dir: number, within?: { start: number; end: number }): Promise<void> {
    q = q.trim();
    if (!q) {
      this.lastQuery = '';
      this.hits = [];
      this.total = 0;
      this.index = -1;
      this.label.textContent = '';
      return;
    }
    if (q !== this.lastQuery && !(await this.fetch(q))) {
      return;
    }
    if (within) {
      const i = this.hits.findIndex(hit => hit.start_ns < within.end && hit.start_ns + hit.dur_ns > within.start);
      if (i >= 0) {
        this.index = i - 1;
        dir = 1;
      }
    }
    this.jump(dir);
  }

  /**
   * Finds the hits of `q` without moving (a link that also names a window or a selection keeps
   * them): the position is `at`'s hit when it is one, else before the first, so Enter steps on.
   */
  async restore(q: string, at?: { kind: string; rank?: number; id: number }): Promise<void> {
    q = q.trim();
    if (!q || q === this.lastQuery) {
      return;
    }
    if (!(await this.fetch(q))) {
      return;
    }
    if (at) {
      this.index = this.hits.findIndex(hit => hit.kind === at.kind && hit.rank === (at.rank ?? 0) && hit.id === at.id);
    }
    this.label.textContent = !this.hits.length
      ? this.t('ui.timeline.no_hits')
      : this.t('ui.timeline.hits', { i: this.index >= 0 ? this.index + 1 : '–', n: this.total, shown: this.hits.length });
  }

  /**
   * Asks for the hits of `q` and holds them, positioned before the first.  False when the answer
   * failed (said in the label) or a newer query came first, so the caller leaves the position alone.
   */
  private async fetch(q: string): Promise<boolean> {
    this.lastQuery = q;
    this.label.textContent = this.t('ui.timeline.searching');
    try {
      const r = await this.data.search(q, 1000);
      if (q !== this.lastQuery) {
        return false;
      }
      this.hits = r.hits;
      this.total = r.total;
      this.index = -1;
      return true;
    } catch (e) {
      this.label.textContent = e instanceof Error ? e.message : String(e);
      this.lastQuery = '';
      return false;
    }
  }

  jump(dir: number): void {
    if (!this.hits.length) {
      this.label.textContent = this.lastQuery ? this.t('ui.timeline.no_hits') : '';
      return;
    }
    this.index = (this.index + dir + this.hits.length) % this.hits.length;
    const hit = this.hits[this.index];
    this.label.textContent = this.t('ui.timeline.hits', {
      i: this.index + 1,
      n: this.total,
      shown: this.hits.length
    });
    this.go(hit);
  }
}
