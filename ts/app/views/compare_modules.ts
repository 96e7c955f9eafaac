/**
 * Compare by module, a section of the Compare view: per `nn.Module` path and phase the device
 * time per rank-step of both runs, the change, its noise band and status
 * (`Comparison.modules()`, in the compare answer as `modules` / `modules_folded`), with a box
 * that folds repeated layers (`Layer_0..N` -> `Layer_*`) and then shows their spread.
 */
import { clear, h } from '../dom';
import { fmtDeltaUs, tr, type Translate } from '../widgets/format';
import { empty, section } from '../widgets/parts';
import { columnsFor, DataTable } from '../widgets/table';

type Row = Record<string, any>;

export function modulesSection(d: { modules?: Row[]; modules_folded?: Row[] }, pair: string, t: Translate): HTMLElement {
  const pick = (rows: Row[] | undefined) => (rows || []).filter(r => r.pair === pair);
  const plain = pick(d.modules);
  const folded = pick(d.modules_folded);
  const title = tr(t, 'ui.compare.modules', 'By module');
  if (!plain.some(r => r.path !== '(unattributed)')) {
    return section(title, empty(tr(t, 'ui.compare.no_modules', 'No nn.Module frames in these runs (collect with with_stack=True).')));
  }
  const box = h('input', { type: 'checkbox', class: 'pi-cmp-fold' });
  const holder = h('div', { class: 'pi-cmp-modules-box' });
  const draw = () => {
    clear(holder);
    const rows = box.checked ? folded : plain;
    holder.appendChild(
      new DataTable({
        t,
        columns: columnsFor(t, Object.keys(rows[0] || {}), rows, ['pair']).map(col =>
          col.key === 'status'
            ? { ...col, format: (v: any) => tr(t, `ui.compare.status.${v}`, String(v)) }
            : col.key === 'delta_us'
              ? { ...col, format: fmtDeltaUs }
              : col
        ),
        rows,
        filter: true,
        className: 'pi-cmp-modules'
      }).el
    );
  };
  box.addEventListener('change', draw);
  draw();
  return section(
    title,
    h('p', { class: 'pi-note' }, tr(t, 'ui.compare.modules_note', 'Device time per rank-step by module path and phase; a change inside the noise band (the runs\u2019 own step-to-step spread) is "unchanged".')),
    h('label', { class: 'pi-control' }, box, tr(t, 'ui.compare.fold_layers', 'fold repeated layers (Layer_0..N) with their spread')),
    holder
  );
}
