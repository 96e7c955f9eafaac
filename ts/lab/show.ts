/**
 * The notebook side of `Profile.show()`: a renderer for `application/vnd.profinsight.show+json`
 * (see `profinsight/jupyter/show.py`).  It asks the server for the profile's id under the
 * Jupyter root and opens the viewer tab, then leaves a one-line note with an "open" button in
 * the output.  A reopened notebook must not open tabs by itself: the tab opens automatically
 * only for an output made within the last minute whose nonce this page has not seen.
 * All text comes from the payload and is set with `textContent`.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import { clear, h } from '../app/dom';
import { LabLabels } from './labels';
import { LabApi } from './transport';

export const SHOW_MIME = 'application/vnd.profinsight.show+json';
const FRESH_MS = 60_000;
const seen = new Set<string>();

interface ShowPayload {
  path: string;
  view: string | null;
  nonce: string;
  created_ms: number;
  format: string;
  level: string | null;
  ranks: number[];
  steps: number[];
  diagnostics: Record<string, number>;
}

export interface ShowDeps {
  api: LabApi;
  labels: LabLabels;
  open: (id: string, view?: string) => void;
  /** the `openFromNotebook` setting */
  autoOpen: () => boolean;
}

class ShowRenderer extends Widget implements IRenderMime.IRenderer {
  constructor(private readonly deps: ShowDeps) {
    super();
    this.addClass('jp-ProfinsightShow');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const data = model.data[SHOW_MIME] as unknown as ShowPayload;
    const { api, labels } = this.deps;
    await labels.ready();
    const t = labels.t;
    clear(this.node);
    const facts = [
      data.format,
      data.level,
      t('ui.lab.ranks', { n: (data.ranks || []).length }),
      data.steps && data.steps.length ? `steps ${data.steps.join(', ')}` : null
    ]
      .filter(Boolean)
      .join(' · ');
    let id: string;
    try {
      id = (await api.resolve(data.path)).id;
    } catch (e) {
      this.node.setAttribute('data-state', 'outside');
      this.node.appendChild(
        h(
          'div',
          { class: 'jp-ProfinsightShow-line' },
          h('span', { class: 'jp-ProfinsightShow-path' }, data.path),
          h('span', { class: 'jp-ProfinsightShow-facts' }, facts),
          h('div', { class: 'jp-ProfinsightShow-note' }, t('ui.lab.show.outside'))
        )
      );
      return;
    }
    const view = data.view || undefined;
    const button = h(
      'button',
      { class: 'jp-ProfinsightShow-open jp-Button jp-mod-styled jp-mod-accept', onclick: () => this.deps.open(id, view) },
      t('ui.lab.show.open')
    );
    const fresh = Math.abs(Date.now() - data.created_ms) < FRESH_MS && !seen.has(data.nonce);
    const auto = fresh && model.trusted && this.deps.autoOpen();
    seen.add(data.nonce);
    this.node.appendChild(
      h(
        'div',
        { class: 'jp-ProfinsightShow-line' },
        h('span', { class: 'jp-ProfinsightShow-brand' }, 'profinsight'),
        h('span', { class: 'jp-ProfinsightShow-path' }, id),
        h('span', { class: 'jp-ProfinsightShow-facts' }, facts),
        auto ? h('span', { class: 'jp-ProfinsightShow-note' }, t('ui.lab.show.opened')) : null,
        button
      )
    );
    this.node.setAttribute('data-state', auto ? 'opened' : 'ready');
    this.node.setAttribute('data-profile-id', id);
    if (auto) {
      this.deps.open(id, view);
    }
  }
}

export function showRendererFactory(deps: ShowDeps): IRenderMime.IRendererFactory {
  return {
    safe: true,
    mimeTypes: [SHOW_MIME],
    defaultRank: 40,
    createRenderer: () => new ShowRenderer(deps)
  };
}
