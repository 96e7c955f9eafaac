/**
 * Renders `application/vnd.profinsight.analysis+json` notebook outputs with the viewer's own
 * analysis-result component: the declared chart above a sortable, filterable table, so a
 * notebook output is as explorable as the browser view.  The static HTML of the same output
 * stays in the notebook for readers without the extension.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import type { AnalysisPayload } from './app/generated/wire';
import { findingCards } from './app/widgets/findings';
import { AnalysisResult } from './app/widgets/result';

export const MIME = 'application/vnd.profinsight.analysis+json';

/** Column labels without the server's catalogue: the analysis column names, which carry units. */
const identity = (key: string) => key;

class AnalysisRenderer extends Widget implements IRenderMime.IRenderer {
  private result: AnalysisResult | null = null;

  constructor() {
    super();
    this.addClass('pi-viewer');
    this.addClass('pi-mime');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[MIME] as unknown as AnalysisPayload | undefined;
    this.result?.dispose();
    this.node.textContent = '';
    if (!data || !Array.isArray(data.rows) || !Array.isArray(data.columns)) {
      this.node.textContent = 'profinsight: no analysis data in this output';
      return;
    }
    if (data.analysis === 'advise' && data.columns.includes('severity')) {
      // the advisor's findings as the viewer's cards, the evidence folded under each
      this.node.appendChild(findingCards(data.rows, { t: identity, evidence: true }));
      return;
    }
    this.result = new AnalysisResult(data, { t: identity, title: true });
    this.node.appendChild(this.result.el);
  }

  dispose(): void {
    this.result?.dispose();
    this.result = null;
    super.dispose();
  }
}

const extension: IRenderMime.IExtension = {
  id: 'profinsight:mime',
  rendererFactory: { safe: true, mimeTypes: [MIME], createRenderer: () => new AnalysisRenderer() },
  rank: 0,
  dataType: 'json'
};

export default extension;
