/**
 * The profinsight JupyterLab extension: a Profiles sidebar, viewer tabs (the same viewer as
 * `profinsight serve`, served by the jupyter-server extension under Jupyter's base_url), a
 * file-browser context-menu entry, a launcher card, command-palette commands, settings and the
 * notebook side of `Profile.show()`.  The analysis MIME renderer is a separate mime extension
 * (`mime.ts`).
 */
import { ILayoutRestorer, IRouter, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, IThemeManager, MainAreaWidget, showErrorMessage, WidgetTracker } from '@jupyterlab/apputils';
import { IFileBrowserFactory } from '@jupyterlab/filebrowser';
import { ILauncher } from '@jupyterlab/launcher';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { profinsightIcon } from './lab/icon';
import { LabLabels } from './lab/labels';
import { showRendererFactory } from './lab/show';
import { ProfilesSidebar } from './lab/sidebar';
import { LabApi } from './lab/transport';
import { parseAddress } from './app/viewer';
import type { ViewState } from './app/views/types';
import { createViewerTab, ViewerPanel } from './lab/viewer';

export { jupyterTransport } from './lab/transport';

const PLUGIN_ID = 'profinsight:plugin';

export namespace CommandIDs {
  export const open = 'profinsight:open';
  export const openPath = 'profinsight:open-path';
  export const openSelected = 'profinsight:open-selected';
  export const openPick = 'profinsight:open-pick';
  export const showProfiles = 'profinsight:show-profiles';
  export const refresh = 'profinsight:refresh';
  export const openLink = 'profinsight:open-link';
}

/** What a file-browser entry can be a profile of: a folder, or a Kineto trace file. */
export function looksLikeProfile(name: string, type: string): boolean {
  return type === 'directory' || /\.json(\.gz)?$/i.test(name);
}

interface Settings {
  defaultView: string;
  cacheDir: string;
  openFromNotebook: boolean;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'profinsight: profiles sidebar and viewer tabs for PyTorch profiles (Ascend NPU, GPU)',
  autoStart: true,
  optional: [ILayoutRestorer, ICommandPalette, ILauncher, IFileBrowserFactory, ISettingRegistry, IThemeManager, IRenderMimeRegistry, IRouter],
  activate: (
    app: JupyterFrontEnd,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    launcher: ILauncher | null,
    browsers: IFileBrowserFactory | null,
    registry: ISettingRegistry | null,
    themes: IThemeManager | null,
    rendermime: IRenderMimeRegistry | null,
    router: IRouter | null
  ) => {
    const api = new LabApi();
    const labels = new LabLabels(api);
    const settings: Settings = { defaultView: 'overview', cacheDir: '', openFromNotebook: true };
    const tracker = new WidgetTracker<MainAreaWidget<ViewerPanel>>({ namespace: 'profinsight' });
    const isLight = () => (themes && themes.theme ? themes.isLight(themes.theme) : document.body.dataset.jpThemeLight !== 'false');

    const openViewer = (id: string, view?: string, state?: ViewState): MainAreaWidget<ViewerPanel> => {
      const existing = tracker.find(w => w.content.profileId === id);
      if (existing) {
        if (view) {
          existing.content.viewer.show(view, state);
        }
        app.shell.activateById(existing.id);
        return existing;
      }
      const w = createViewerTab(id, view || settings.defaultView, state);
      w.content.setTheme(isLight());
      void tracker.add(w);
      app.shell.add(w, 'main');
      app.shell.activateById(w.id);
      return w;
    };

    const sidebar = new ProfilesSidebar(api, labels, id => openViewer(id));
    app.shell.add(sidebar, 'left', { rank: 850 });
    if (restorer) {
      restorer.add(sidebar, 'profinsight-sidebar');
      void restorer.restore(tracker, {
        command: CommandIDs.open,
        args: w => ({ id: w.content.profileId }),
        name: w => w.content.profileId
      });
    }
    /** Opens what the file browser points at: one run directly, several by choice. */
    const openPath = async (path: string): Promise<void> => {
      const t = labels.t;
      await labels.ready();
      let listing;
      try {
        listing = await api.runs({ under: path || ':root' });
      } catch (e) {
        await showErrorMessage('profinsight', t('ui.lab.not_profile', { path: path || '/' }));
        return;
      }
      const runs = listing.runs;
      if (runs.length === 1) {
        openViewer(runs[0].id);
        return;
      }
      if (!runs.length) {
        const why = listing.problems.map(p => `${p.error}${p.fix ? '\n' + p.fix : ''}`).join('\n\n');
        await showErrorMessage('profinsight', `${t('ui.lab.not_profile', { path: path || '/' })}\n\n${why || t('ui.lab.profile_hint')}`);
        return;
      }
      const pick = await InputDialog.getItem({
        title: t('ui.lab.pick_run', { path: path || '/', n: runs.length }),
        items: runs.map(r => r.id),
        okLabel: t('ui.lab.open')
      });
      if (pick.button.accept && pick.value) {
        openViewer(pick.value);
      }
    };

    app.commands.addCommand(CommandIDs.open, {
      label: args => (args.id ? `Open ${String(args.id)} in profinsight` : 'Open profile in profinsight'),
      caption: 'Open a profile (by its path under the Jupyter root) in a profinsight viewer tab',
      icon: profinsightIcon,
      execute: args => {
        const id = String(args.id ?? '');
        if (!id) {
          return app.commands.execute(CommandIDs.openPick);
        }
        return openViewer(id, args.view ? String(args.view) : undefined);
      }
    });
    // `lab?profinsight=<id>/<view>?<state>` (the links `profinsight mcp` hands out): open that tab there
    app.commands.addCommand(CommandIDs.openLink, {
      label: 'Open a profinsight link',
      execute: args => {
        const search = String((args as { search?: unknown }).search ?? '');
        const value = new URLSearchParams(search).get('profinsight');
        const at = value ? parseAddress(value) : null;
        if (at && at.id) {
          const id = at.id;
          void app.restored.then(() => openViewer(id, at.view, at.state));
        }
      }
    });
    router?.register({ command: CommandIDs.openLink, pattern: /[?&]profinsight=/ });
    app.commands.addCommand(CommandIDs.openPath, {
      label: 'Open path in profinsight',
      execute: args => openPath(String(args.path ?? ''))
    });
    const selected = () => {
      const browser = browsers?.tracker.currentWidget;
      if (!browser) {
        return null;
      }
      const item = browser.selectedItems().next();
      return item && !item.done ? item.value : null;
    };
    app.commands.addCommand(CommandIDs.openSelected, {
      label: 'Open in profinsight',
      caption: 'Open this profile folder or trace file in a profinsight viewer tab',
      icon: profinsightIcon,
      isVisible: () => {
        const item = selected();
        return !!item && looksLikeProfile(item.name, item.type);
      },
      execute: () => {
        const item = selected();
        if (item) {
          return openPath(item.path);
        }
      }
    });
    app.commands.addCommand(CommandIDs.openPick, {
      label: 'Open profile…',
      caption: 'Choose one of the profiles under the Jupyter root',
      icon: profinsightIcon,
      execute: async () => {
        await labels.ready();
        const listing = await api.runs();
        if (!listing.runs.length) {
          await showErrorMessage('profinsight', labels.t('ui.lab.empty'));
          return;
        }
        const pick = await InputDialog.getItem({
          title: labels.t('ui.lab.title'),
          items: listing.runs.map(r => r.id),
          okLabel: labels.t('ui.lab.open')
        });
        if (pick.button.accept && pick.value) {
          openViewer(pick.value);
        }
      }
    });
    app.commands.addCommand(CommandIDs.showProfiles, {
      label: args => (args.isLauncher ? 'Profiles' : 'Show profiles'),
      caption: 'profinsight: the profiles under the Jupyter root',
      icon: profinsightIcon,
      execute: () => {
        app.shell.activateById(sidebar.id);
      }
    });
    app.commands.addCommand(CommandIDs.refresh, {
      label: 'Scan for profiles again',
      icon: profinsightIcon,
      execute: () => sidebar.refresh(true)
    });

    app.contextMenu.addItem({ command: CommandIDs.openSelected, selector: '.jp-DirListing-item[data-isdir]', rank: 3 });

    if (palette) {
      const category = 'profinsight';
      for (const command of [CommandIDs.showProfiles, CommandIDs.openPick, CommandIDs.refresh]) {
        palette.addItem({ command, category });
      }
    }
    if (launcher) {
      launcher.add({ command: CommandIDs.showProfiles, category: 'Other', rank: 1, args: { isLauncher: true } });
    }

    if (themes) {
      themes.themeChanged.connect(() => {
        const light = isLight();
        tracker.forEach(w => w.content.setTheme(light));
      });
    }

    if (rendermime) {
      rendermime.addFactory(
        showRendererFactory({ api, labels, open: (id, view) => openViewer(id, view), autoOpen: () => settings.openFromNotebook }),
        40
      );
    }

    if (registry) {
      let sentCacheDir: string | null = null;
      const apply = (s: ISettingRegistry.ISettings) => {
        settings.defaultView = String(s.get('defaultView').composite || 'overview');
        settings.openFromNotebook = s.get('openFromNotebook').composite !== false;
        const dir = String(s.get('cacheDir').composite ?? '').trim();
        if (dir !== sentCacheDir && (dir || sentCacheDir !== null)) {
          sentCacheDir = dir;
          api.setCacheDir(dir).catch(e => {
            void showErrorMessage('profinsight: cache folder', e instanceof Error ? e.message : String(e));
          });
        }
      };
      void Promise.all([registry.load(PLUGIN_ID), app.restored])
        .then(([s]) => {
          apply(s);
          s.changed.connect(apply);
        })
        .catch(() => undefined);
    }
  }
};

export default plugin;
