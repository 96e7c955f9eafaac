/** Renders `application/vnd.profinsight.analysis+json` notebook outputs. */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

export const MIME = 'application/vnd.profinsight.analysis+json';

class AnalysisRenderer extends Widget implements IRenderMime.IRenderer {
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[MIME] as any;
    this.node.textContent = `${data?.title ?? ''} (${data?.total_rows ?? 0} rows)`;
  }
}

const extension: IRenderMime.IExtension = {
  id: 'profinsight:mime',
  rendererFactory: { safe: true, mimeTypes: [MIME], createRenderer: () => new AnalysisRenderer() },
  rank: 0,
  dataType: 'json'
};

export default extension;
