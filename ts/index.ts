/** JupyterLab plugin: the profinsight viewer in a main-area tab, through Jupyter's server. */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { MainAreaWidget } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { Widget } from '@lumino/widgets';
import { Params, query, readJson, Transport } from './app/api';
import { Viewer } from './app/viewer';

/** Requests under `{base_url}profinsight/`, with Jupyter's token and XSRF. */
export function jupyterTransport(): Transport {
  const settings = ServerConnection.makeSettings();
  return async (path: string, params?: Params) => {
    const url = URLExt.join(settings.baseUrl, 'profinsight', path) + query(params);
    return readJson((await ServerConnection.makeRequest(url, {}, settings)) as unknown as Response);
  };
}

class ViewerWidget extends Widget {
  private viewer: Viewer;
  constructor(profileId: string) {
    super();
    this.addClass('jp-ProfinsightViewer');
    this.viewer = new Viewer(this.node, jupyterTransport(), { profileId, fixedProfile: true });
    void this.viewer.start();
  }
  dispose(): void {
    this.viewer.dispose();
    super.dispose();
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'profinsight:plugin',
  description: 'profinsight viewer for PyTorch profiles',
  autoStart: true,
  activate: (app: JupyterFrontEnd) => {
    app.commands.addCommand('profinsight:open', {
      label: 'Open profile in profinsight',
      execute: args => {
        const id = String(args.id ?? '');
        const w = new MainAreaWidget({ content: new ViewerWidget(id) });
        w.title.label = id || 'profinsight';
        app.shell.add(w, 'main');
      }
    });
  }
};

export default plugin;
