/**
 * The viewer tab: the host-agnostic viewer shell (`ts/app/viewer.ts`, the same UI as
 * `profinsight serve`) inside a JupyterLab main-area widget, talking to the server through
 * Jupyter's own connection.  Colours follow the lab's theme through the `--jp-*` variables the
 * viewer's CSS reads; views that draw on a canvas listen for `pi-theme-change` on their pane's
 * ancestors (or read `data-pi-theme`) to repaint when the user switches light/dark.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { Viewer } from '../app/viewer';
import type { ViewState } from '../app/views/types';
import { profinsightIcon } from './icon';
import { jupyterTransport } from './transport';

export class ViewerPanel extends Widget {
  readonly viewer: Viewer;

  constructor(
    readonly profileId: string,
    view?: string,
    state?: ViewState
  ) {
    super();
    this.addClass('jp-ProfinsightViewer');
    this.node.setAttribute('data-profile-id', profileId);
    this.viewer = new Viewer(this.node, jupyterTransport(), { profileId, fixedProfile: true, view, state });
    void this.viewer.start();
  }

  /** Tells the views the lab's theme changed (after its CSS variables are in place). */
  setTheme(light: boolean): void {
    this.node.setAttribute('data-pi-theme', light ? 'light' : 'dark');
    this.node.dispatchEvent(new CustomEvent('pi-theme-change', { detail: { light }, bubbles: false }));
    // views are mounted below this node: tell each pane too, so a view needs no knowledge of the host
    for (const pane of Array.from(this.node.querySelectorAll('.pi-pane'))) {
      pane.dispatchEvent(new CustomEvent('pi-theme-change', { detail: { light }, bubbles: false }));
    }
  }

  protected onResize(msg: Widget.ResizeMessage): void {
    super.onResize(msg);
    window.dispatchEvent(new Event('resize')); // canvas views size themselves on window resize
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    window.dispatchEvent(new Event('resize'));
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.viewer.dispose();
    super.dispose();
  }
}

/** A main-area tab for profile `id`: label = its last path part, caption = the whole id. */
export function createViewerTab(id: string, view?: string, state?: ViewState): MainAreaWidget<ViewerPanel> {
  const content = new ViewerPanel(id, view, state);
  const w = new MainAreaWidget({ content });
  w.id = `profinsight-viewer-${encodeURIComponent(id)}`;
  w.addClass('jp-ProfinsightViewerTab');
  const parts = id.split('/');
  w.title.label = id === ':root' ? 'profinsight' : parts[parts.length - 1] || id;
  w.title.caption = `profinsight: ${id}`;
  w.title.icon = profinsightIcon;
  w.title.closable = true;
  return w;
}
