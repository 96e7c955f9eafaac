/**
 * What a view is and what it gets, below the shell that hosts the views: the views and the
 * shell (`../viewer`) both import this module, so no view ever imports the shell.
 */
import type { Api, ProfileInfo } from '../api';
import type { Lang } from '../i18n';

/**
 * What `navigate` hands a view (../link.ts declares it: a link carries the same state).  The
 * timeline reads all of it (its navigation contract is documented in ./timeline.ts); other views
 * ignore what they do not know.  States also come from page scripts (test hooks) and links, so
 * views still check the types at run time.
 */
export type { ViewState } from '../link';
import type { ViewState } from '../link';

/** What a view gets: the API, the loaded profile, labels, and navigation to another view. */
export interface ViewContext {
  api: Api;
  profile: ProfileInfo;
  t: (key: string, vars?: Record<string, string | number>) => string;
  lang: Lang;
  /** Show `view` and hand it `state` (e.g. `{rank, start_ns, end_ns}` for the timeline). */
  navigate: (view: string, state?: ViewState) => void;
  /**
   * What the view shows now (its window, selection, filter), for the page address: the host
   * writes it into the link (../link.ts) without a new history entry.  Optional for hosts.
   */
  setState?: (state: ViewState) => void;
}

/** One page of the viewer.  `show` is called on every visit, with the state navigate passed. */
export interface View {
  mount(el: HTMLElement, ctx: ViewContext): void | Promise<void>;
  show?(state?: ViewState): void;
  hide?(): void;
  dispose?(): void;
}

export interface ViewSpec {
  id: string;
  /** message key of the tab label */
  label: string;
  create(): View;
}
