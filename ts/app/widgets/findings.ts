/**
 * The advisor's findings as cards: severity, title, what was seen, what it costs per step — or over
 * the capture where no step was recorded — (the glossary's *recoverable time* on hover), what to change, a jump to the evidence's window on the
 * timeline where the host can show it, and the evidence itself folded under the card.  The
 * Overview and the notebook's `advise()` output (JupyterLab's renderer of the analysis payload)
 * draw the same cards.
 */
import { fmtDuration, h } from '../dom';
import type { Json } from '../generated/wire';
import type { ViewState } from '../link';
import { fmtPct, isNum, num, termText, tr, Translate, txt } from './format';
import { empty } from './parts';

/** The timeline window a finding's evidence points at (`evidence.window`), if any. */
export function timelineWindow(evidence: Json | undefined): ViewState | null {
  if (!evidence || typeof evidence !== 'object' || Array.isArray(evidence)) {
    return null;
  }
  const w = evidence.window;
  return w && typeof w === 'object' && !Array.isArray(w) ? (w as ViewState) : null;
}

/**
 * A finding's recoverable time with what it is of: per step (and its share of the mean step), or
 * — where the profile records no step (`basis` "capture", a column of `advise()`) — over the whole
 * capture, whose share is of the capture, never of a step that does not exist.  Without a share
 * (nothing to take it of) the time is said alone.  The English fallbacks are the catalogue's words
 * (the notebook's renderer has no catalogue).
 */
export function recoverableText(t: Translate, r: Record<string, any>): string {
  const time = fmtDuration(Number(r.recoverable_us) * 1e3);
  const share = fmtPct(num(r.share_of_step_ratio));
  const capture = r.basis === 'capture';
  if (capture) {
    return share
      ? tr(t, 'ui.overview.recoverable.capture', `Recoverable: up to ${time} in the capture (${share} of the capture; no step recorded)`, { time, share })
      : tr(t, 'ui.overview.recoverable.capture.no_share', `Recoverable: up to ${time} in the capture (no step recorded)`, { time });
  }
  return share
    ? tr(t, 'ui.overview.recoverable', `Recoverable: up to ${time} per step (${share} of the step)`, { time, share })
    : tr(t, 'ui.overview.recoverable.no_share', `Recoverable: up to ${time} per step`, { time });
}

export interface FindingOptions {
  t: Translate;
  /** open the evidence's window on the timeline (no button without it) */
  onJump?: (w: ViewState) => void;
  /** fold the evidence under each card (as indented JSON: complete, selectable) */
  evidence?: boolean;
}

export function findingCards(rows: Record<string, any>[], opts: FindingOptions): HTMLElement {
  const t = opts.t;
  const fired = rows.filter(r => r.severity !== 'not_applicable');
  const na = rows.filter(r => r.severity === 'not_applicable');
  const box = h('div', { class: 'pi-findings' });
  if (!fired.length) {
    box.appendChild(empty(tr(t, 'ui.overview.no_findings', 'No rule found a problem in this profile.')));
  }
  for (const r of fired) {
    const w = timelineWindow(r.evidence);
    const jump =
      w && opts.onJump
        ? h('button', { class: 'pi-jump', onclick: () => opts.onJump!(w) }, tr(t, 'ui.common.show_on_timeline', 'Show on timeline'))
        : null;
    const rec = isNum(r.recoverable_us)
      ? h(
          'div',
          { class: 'pi-finding-rec pi-term', 'data-term': 'recoverable', title: termText(t, 'recoverable') },
          recoverableText(t, r)
        )
      : null;
    const evidence =
      opts.evidence && r.evidence && typeof r.evidence === 'object'
        ? h(
            'details',
            { class: 'pi-finding-evidence' },
            h('summary', {}, tr(t, 'ui.overview.evidence', 'Evidence')),
            h('pre', {}, JSON.stringify(r.evidence, null, 2))
          )
        : null;
    box.appendChild(
      h(
        'article',
        { class: `pi-finding pi-sev-${r.severity}`, 'data-rule': txt(r.rule) },
        h(
          'div',
          { class: 'pi-finding-head' },
          h('span', { class: `pi-badge pi-sev-${r.severity}` }, tr(t, `ui.severity.${r.severity}`, String(r.severity))),
          h('span', { class: 'pi-finding-title' }, txt(r.title)),
          h('span', { class: 'pi-spacer' }),
          jump
        ),
        h('div', { class: 'pi-finding-message' }, txt(r.message)),
        rec,
        r.change ? h('div', { class: 'pi-finding-change' }, h('b', {}, `${tr(t, 'ui.overview.change', 'Change')}: `), txt(r.change)) : null,
        evidence
      )
    );
  }
  if (na.length) {
    box.appendChild(
      h(
        'div',
        { class: 'pi-note' },
        `${tr(t, 'ui.overview.not_applicable', 'Not applicable here')}: ${na.map(r => r.title).join(', ')} (${Array.from(new Set(na.map(r => r.message))).join('; ')})`
      )
    );
  }
  return box;
}
