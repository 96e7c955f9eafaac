/**
 * The load diagnostics of the open profile as a banner under the header: the worst ones first,
 * each with its file and fix, the rest behind "show all", dismissable for this profile.  The
 * header's counter (viewer.ts) stays the compact form; the banner is what a user sees before
 * wondering why a view is empty (docs/troubleshooting.md lists every code).
 */
import type { Diagnostic } from '../api';
import { h } from '../dom';

/** how many diagnostics the banner shows before "show all" */
export const BANNER_TOP = 3;
const ORDER: Record<string, number> = { error: 0, warning: 1, info: 2 };
const dismissed = new Set<string>();

type T = (key: string, vars?: Record<string, string | number>) => string;

function item(d: Diagnostic, t: T): HTMLElement {
  const rank = d.rank !== null && d.rank !== undefined ? ` · ${t('ui.banner.rank', { rank: d.rank })}` : '';
  return h(
    'li',
    { class: `pi-banner-item pi-diag-${d.severity}`, 'data-code': d.code },
    h('span', { class: 'pi-diag-code' }, `${d.severity} · ${d.code}${rank}`),
    h('div', { class: 'pi-banner-message' }, d.message),
    d.file ? h('div', { class: 'pi-diag-file' }, d.file) : null,
    d.fix ? h('div', { class: 'pi-diag-fix' }, `${t('ui.fix')}: ${d.fix}`) : null
  );
}

/** The banner for `diags` of profile `id`, or null when there is nothing to say (or it was dismissed). */
export function diagnosticsBanner(id: string, diags: Diagnostic[], t: T): HTMLElement | null {
  if (!diags.length || dismissed.has(id)) {
    return null;
  }
  const sorted = [...diags].sort((a, b) => (ORDER[a.severity] ?? 3) - (ORDER[b.severity] ?? 3));
  const worst = sorted[0].severity;
  const count = (sev: string) => diags.filter(d => d.severity === sev).length;
  const counts = [
    count('error') ? t('ui.diag.errors', { n: count('error') }) : null,
    count('warning') ? t('ui.diag.warnings', { n: count('warning') }) : null,
    count('info') ? t('ui.diag.infos', { n: count('info') }) : null
  ].filter(Boolean);
  const list = h('ul', { class: 'pi-banner-list' });
  sorted.slice(0, BANNER_TOP).forEach(d => list.appendChild(item(d, t)));
  const banner = h('div', { class: `pi-banner pi-banner-${worst}`, role: worst === 'info' ? 'status' : 'alert' });
  const close = h('button', { class: 'pi-banner-close', title: t('ui.banner.dismiss'), 'aria-label': t('ui.banner.dismiss') }, '×');
  close.addEventListener('click', () => {
    dismissed.add(id);
    banner.remove();
  });
  const head = h(
    'div',
    { class: 'pi-banner-head' },
    h('strong', {}, t('ui.banner.title')),
    h('span', { class: 'pi-banner-counts' }, counts.join(' · ')),
    h('span', { class: 'pi-spacer' }),
    close
  );
  banner.appendChild(head);
  banner.appendChild(list);
  if (sorted.length > BANNER_TOP) {
    const more = h('button', { class: 'pi-banner-more' }, t('ui.banner.show_all', { n: sorted.length }));
    more.addEventListener('click', () => {
      sorted.slice(BANNER_TOP).forEach(d => list.appendChild(item(d, t)));
      more.remove();
    });
    banner.appendChild(more);
  }
  return banner;
}
