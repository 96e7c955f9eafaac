/**
 * Labels of the JupyterLab side (sidebar, dialogs, notebook output), from the same catalogue as
 * the viewer (`ui.lab.*` keys of `profinsight/i18n/ui.py`, served by `api/messages`) in the
 * viewer's language.  Command-palette, menu and launcher labels are registered before any
 * request can be made and stay English, as JupyterLab's own are without a language pack.
 * The English text below is the fallback while (or if) the catalogue cannot be fetched.
 */
import type { Api } from '../app/api';
import { defaultLang, Lang, Messages } from '../app/i18n';

const FALLBACK: Record<string, string> = {
  'ui.lab.title': 'Profiles',
  'ui.lab.refresh': 'Scan again',
  'ui.lab.scanning': 'Looking for profiles under the Jupyter root…',
  'ui.lab.count': '{n} profile(s) · scanned in {s} s',
  'ui.lab.truncated': 'The scan stopped early (too many folders); open deeper folders from the file browser.',
  'ui.lab.empty':
    'No profiles under the Jupyter root. A profile is a *_ascend_pt folder (or a folder of them) or a Kineto .json/.json.gz trace.',
  'ui.lab.open': 'Open',
  'ui.lab.ranks': '{n} rank(s)',
  'ui.lab.status.ok': 'checked',
  'ui.lab.status.unchecked': 'not opened yet',
  'ui.lab.status.warning': '{n} warning(s)',
  'ui.lab.status.error': '{n} error(s)',
  'ui.lab.cached': 'cached',
  'ui.lab.loading': 'loading',
  'ui.lab.problems': '{n} folder(s) could not be read',
  'ui.lab.not_profile': 'No profile at {path}',
  'ui.lab.profile_hint':
    'A profile is a torch_npu *_ascend_pt folder, a folder of them (one run), or a PyTorch Kineto .json/.json.gz trace.',
  'ui.lab.pick_run': '{path} holds {n} runs: choose one',
  'ui.lab.show.opened': 'Opened in the profinsight viewer',
  'ui.lab.show.open': 'Open in the profinsight viewer',
  'ui.lab.show.outside': 'This profile is outside the Jupyter root, so the viewer cannot open it.'
};

export class LabLabels {
  private msgs: Messages | null = null;
  private pending: Promise<void> | null = null;

  constructor(private readonly api: Api) {}

  get lang(): Lang {
    return this.msgs ? this.msgs.lang : defaultLang();
  }

  /** Fetches the catalogue once for the current language (again when it changed). */
  async ready(): Promise<void> {
    const lang = defaultLang();
    if (this.msgs && this.msgs.lang === lang) {
      return;
    }
    if (!this.pending) {
      this.pending = Messages.load(this.api, lang)
        .then(m => {
          this.msgs = m;
        })
        .catch(() => undefined)
        .finally(() => {
          this.pending = null;
        });
    }
    await this.pending;
  }

  t = (key: string, vars: Record<string, string | number> = {}): string => {
    const text = this.msgs && this.msgs.has(key) ? this.msgs.t(key) : FALLBACK[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  };
}
