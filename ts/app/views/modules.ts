/**
 * Modules: device time by `nn.Module` as an icicle (width = inclusive device time), one phase at
 * a time (forward / backward / other), fed by the `module_time` analysis route; below it the
 * source lines of `code_time` with a copyable `file:line`.
 *
 * Click a node: the timeline opens on the range of its tasks (first start to last end) with its
 * longest task selected.  The search box marks the nodes whose path contains the text and dims
 * the rest.  Layout (`layout`) is a pure step apart from drawing.
 */
import { clear, h } from '../dom';
import type { AnalysisPayload, Json } from '../generated/wire';
import { fmtPct, fmtUs, isNum, tr } from '../widgets/format';
import { empty, errorBox, fill, section } from '../widgets/parts';
import { DataTable } from '../widgets/table';
import type { View, ViewContext, ViewState } from './types';

const PHASES = ['forward', 'backward', 'other'];
const UNATTRIBUTED = '(unattributed)';
/** nodes narrower than this share of the phase are not drawn (their time stays in the parent) */
const MIN_WIDTH = 0.002;
const ROW_PX = 22;

type Row = Record<string, Json>;

export interface IcicleNode {
  row: Row;
  path: string;
  label: string;
  depth: number;
  inclusive: number;
  children: IcicleNode[];
  /** left edge and width, as shares 0..1 of the phase's total */
  x: number;
  w: number;
}

/** The phase's rows as a laid-out tree: roots and `(unattributed)` side by side over the
 * phase total; each node's children split its width by their inclusive time, largest first. */
export function layout(rows: Row[], phase: string): { nodes: IcicleNode[]; total: number; depth: number } {
  const mine = rows.filter(r => r.phase === phase);
  const byPath = new Map<string, IcicleNode>();
  const roots: IcicleNode[] = [];
  for (const r of mine) {
    const path = String(r.path);
    const node: IcicleNode = {
      row: r,
      path,
      label: path === UNATTRIBUTED ? UNATTRIBUTED : String(r.module ?? path),
      depth: isNum(r.depth) ? r.depth : 0,
      inclusive: isNum(r.inclusive_us) ? r.inclusive_us : 0,
      children: [],
      x: 0,
      w: 0
    };
    byPath.set(`${path}\u0000${String(r.reason ?? '')}`, node);
  }
  for (const node of byPath.values()) {
    const parent = node.row.parent;
    const up = typeof parent === 'string' ? byPath.get(`${parent}\u0000`) : undefined;
    (up ? up.children : roots).push(node);
  }
  const total = roots.reduce((s, n) => s + n.inclusive, 0);
  const out: IcicleNode[] = [];
  let depth = 0;
  const place = (list: IcicleNode[], x: number, scale: number) => {
    list.sort((a, b) => b.inclusive - a.inclusive);
    let at = x;
    for (const n of list) {
      n.x = at;
      n.w = n.inclusive * scale;
      at += n.w;
      if (n.w >= MIN_WIDTH) {
        out.push(n);
        depth = Math.max(depth, n.depth + 1);
        place(n.children, n.x, scale);
      }
    }
  };
  place(roots, 0, total > 0 ? 1 / total : 0);
  return { nodes: out, total, depth };
}

export function create(): View {
  let apply: ((s?: ViewState) => void) | null = null;
  return {
    show(s?: ViewState) {
      apply?.(s);
    },
    mount(el: HTMLElement, ctx: ViewContext) {
      const t = ctx.t;
      const state = { phase: 'forward', query: '', rank: '', userOnly: true };
      let loaded = false;
      /** Tells the host what the view shows, for its link (defaults left out). */
      const report = () =>
        ctx.setState?.({
          phase: state.phase !== 'forward' ? state.phase : undefined,
          query: state.query || undefined,
          rank: state.rank ? Number(state.rank) : undefined
        });
      const phaseBox = h('div', { class: 'pi-controls pi-mod-phases', role: 'group' });
      const search = h('input', {
        type: 'search',
        class: 'pi-mod-search',
        placeholder: tr(t, 'ui.modules.search', 'Search modules'),
        'aria-label': tr(t, 'ui.modules.search', 'Search modules')
      });
      const rankSel =
        ctx.profile.ranks.length > 1
          ? h(
              'select',
              { class: 'pi-mod-rank', 'aria-label': t('ui.common.rank') },
              h('option', { value: '' }, t('ui.common.all_ranks')),
              ctx.profile.ranks.map(r => h('option', { value: String(r) }, String(r)))
            )
          : null;
      const icicle = h('div', { class: 'pi-mod-icicle', style: 'position:relative;width:100%;margin:8px 0' });
      const note = h('p', { class: 'pi-note pi-mod-note' });
      const lines = h('div', { class: 'pi-mod-lines' });
      const body = h('div', { class: 'pi-mod-body' });
      el.appendChild(h('div', { class: 'pi-controls' }, phaseBox, search, rankSel));
      el.appendChild(body);
      let modules: AnalysisPayload | null = null;
      let code: AnalysisPayload | null = null;

      const params = (): Record<string, string> => (state.rank ? { rank: state.rank } : {});
      const load = () => {
        loaded = true;
        return fill(
          body,
          t,
          async () => {
            [modules, code] = await Promise.all([
              ctx.api.analysis(ctx.profile.id, 'module_time', params()),
              ctx.api.analysis(ctx.profile.id, 'code_time', { ...params(), user_only: String(state.userOnly) })
            ]);
            if (!modules.rows.length) {
              return [empty(tr(t, 'ui.modules.none', 'No device task to attribute.'))];
            }
            draw();
            return [
              section(tr(t, 'ui.modules.title', 'Device time by nn.Module'), note, icicle),
              section(tr(t, 'ui.modules.lines', 'Source lines'), lines)
            ];
          },
          errorBox
        );
      };

      const drawPhases = () => {
        clear(phaseBox);
        for (const p of PHASES) {
          const has = modules?.rows.some(r => r.phase === p);
          const b = h(
            'button',
            { class: `pi-chip pi-mod-phase${state.phase === p ? ' pi-active' : ''}`, 'data-phase': p, 'aria-pressed': String(state.phase === p), disabled: !has },
            tr(t, `ui.modules.phase.${p}`, p)
          );
          b.addEventListener('click', () => {
            state.phase = p;
            draw();
          });
          phaseBox.appendChild(b);
        }
      };

      const draw = () => {
        if (!modules) {
          return;
        }
        if (!modules.rows.some(r => r.phase === state.phase)) {
          state.phase = PHASES.find(p => modules?.rows.some(r => r.phase === p)) ?? 'forward';
        }
        report();
        drawPhases();
        const { nodes, total, depth } = layout(modules.rows, state.phase);
        clear(icicle);
        icicle.style.height = `${Math.max(depth, 1) * ROW_PX}px`;
        const q = state.query.toLowerCase();
        for (const n of nodes) {
          icicle.appendChild(nodeEl(n, q));
        }
        note.textContent = tr(t, 'ui.modules.note', '{total} of device time in this phase; click a module to see its tasks on the timeline.', {
          total: fmtUs(total)
        });
        drawLines();
      };

      const nodeEl = (n: IcicleNode, q: string): HTMLElement => {
        const r = n.row;
        const hit = q !== '' && n.path.toLowerCase().includes(q);
        const lost = n.path === UNATTRIBUTED;
        const title = [
          lost ? `${UNATTRIBUTED}: ${String(r.reason ?? '')}` : n.path,
          `${fmtUs(n.inclusive)} ${tr(t, 'ui.modules.inclusive', 'inclusive')}, ${fmtUs(Number(r.self_us))} ${tr(t, 'ui.modules.self', 'self')}`,
          `${String(r.kernels)} ${tr(t, 'ui.modules.tasks', 'tasks')} · ${fmtPct(Number(r.share_of_step_ratio))}`,
          String(r.top_kernels ?? '')
        ].join('\n');
        const cls = ['pi-mod-node', lost ? 'pi-mod-lost' : '', hit ? 'pi-mod-hit' : '', q && !hit ? 'pi-mod-dim' : ''];
        const style =
          `position:absolute;box-sizing:border-box;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;` +
          `left:${(n.x * 100).toFixed(4)}%;width:${(n.w * 100).toFixed(4)}%;top:${n.depth * ROW_PX}px;height:${ROW_PX - 2}px;` +
          `padding:2px 4px;font-size:11px;cursor:pointer;border:1px solid var(--pi-bg, #fff);` +
          `background:${lost ? '#bbb' : hit ? '#f58518' : depthColor(n.depth)};color:#fff;opacity:${q && !hit ? 0.35 : 1}`;
        const el = h('div', { class: cls.filter(Boolean).join(' '), style, title, 'data-path': n.path, role: 'button', tabindex: 0 }, n.label);
        const go = () => jump(r);
        el.addEventListener('click', go);
        el.addEventListener('keydown', e => {
          if ((e as KeyboardEvent).key === 'Enter') {
            go();
          }
        });
        return el;
      };

      const jump = (r: Row) => {
        if (r.start_ns === null || r.start_ns === undefined || r.end_ns === null || r.end_ns === undefined) {
          return;
        }
        const rank = isNum(r.longest_rank) ? r.longest_rank : 0;
        ctx.navigate('timeline', {
          rank,
          start_ns: r.start_ns as number | string,
          end_ns: r.end_ns as number | string,
          select: isNum(r.longest_task_uid) ? { kind: 'device_task', rank, id: r.longest_task_uid } : undefined
        });
      };

      const drawLines = () => {
        clear(lines);
        const own = h('input', { type: 'checkbox', class: 'pi-mod-user' });
        own.checked = state.userOnly;
        own.addEventListener('change', () => {
          state.userOnly = own.checked;
          void load();
        });
        lines.appendChild(h('label', { class: 'pi-control' }, own, tr(t, 'ui.modules.user_only', 'model lines only (skip Python, torch and profiler frames)')));
        const rows = (code?.rows ?? [])
          .filter(r => r.phase === state.phase && r.frame !== UNATTRIBUTED && isNum(r.self_us) && r.self_us > 0)
          .sort((a, b) => Number(b.self_us) - Number(a.self_us));
        if (!rows.length) {
          lines.appendChild(empty(tr(t, 'ui.modules.no_lines', 'No Python frame recorded for these tasks (collect with with_stack=True).')));
          return;
        }
        const whereOf = (r: Record<string, any>) =>
          r.line === null || r.line === undefined ? String(r.file ?? r.frame) : `${String(r.file)}:${String(r.line)}`;
        const copyButton = (r: Record<string, any>) => {
          const where = whereOf(r);
          const copy = h('button', { class: 'pi-chip pi-mod-copy', title: tr(t, 'ui.modules.copy', 'Copy') }, tr(t, 'ui.modules.copy', 'Copy'));
          copy.addEventListener('click', e => {
            e.stopPropagation();
            void copyText(where).then(ok => {
              copy.textContent = ok ? tr(t, 'ui.modules.copied', 'Copied') : where;
            });
          });
          return copy;
        };
        const table = new DataTable({
          t,
          name: 'code_time',
          className: 'pi-mod-lines-table',
          rows: rows.map(r => ({ ...r, where: whereOf(r) })),
          exportKeys: ['where', 'function', 'phase', 'self_us', 'inclusive_us', 'kernels'],
          rowAttrs: r => ({ class: 'pi-mod-line', 'data-where': String(r.where) }),
          columns: [
            { key: 'where', label: tr(t, 'ui.modules.line', 'file:line'), node: r => h('code', { class: 'pi-mod-where' }, String(r.where)) },
            { key: 'function', label: tr(t, 'ui.modules.function', 'function') },
            { key: 'self_us', label: tr(t, 'ui.modules.self', 'self'), numeric: true },
            { key: 'inclusive_us', label: tr(t, 'ui.modules.inclusive', 'inclusive'), numeric: true },
            { key: 'kernels', label: tr(t, 'ui.modules.tasks', 'tasks'), numeric: true },
            { key: '', label: '', node: copyButton, format: () => '' }
          ]
        });
        lines.appendChild(table.el);
      };

      search.addEventListener('input', () => {
        state.query = search.value.trim();
        draw();
      });
      rankSel?.addEventListener('change', () => {
        state.rank = rankSel.value;
        void load();
      });
      /** A link's (or Back/Forward's) phase, search and rank; no state keeps what is shown. */
      apply = (s?: ViewState) => {
        if (!s) {
          if (!loaded) {
            void load();
          }
          return;
        }
        const rank = typeof s.rank === 'number' && rankSel && ctx.profile.ranks.includes(s.rank) ? String(s.rank) : '';
        state.phase = s.phase && PHASES.includes(s.phase) ? s.phase : 'forward';
        state.query = (s.query || '').trim();
        search.value = state.query;
        if (rankSel) {
          rankSel.value = rank;
        }
        if (!loaded || rank !== state.rank) {
          state.rank = rank;
          void load();
        } else {
          draw();
        }
      };
    }
  };
}

function depthColor(depth: number): string {
  const palette = ['#4c78a8', '#5b8db8', '#72a0c7', '#54a24b', '#6cb665', '#88c57e', '#b279a2', '#c08cb3'];
  return palette[depth % palette.length];
}

/** Copies `text`; the clipboard API needs a secure context, so fall back to a selection copy. */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = h('textarea', { style: 'position:fixed;opacity:0' });
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    ta.remove();
    return ok;
  }
}
