/** operators view (being built). */
import { h } from '../dom';
import type { View, ViewContext } from '../viewer';

export function create(): View {
  return {
    mount(el: HTMLElement, ctx: ViewContext) {
      el.appendChild(h('div', { class: 'pi-empty' }, ctx.t('ui.view.operators')));
    }
  };
}
