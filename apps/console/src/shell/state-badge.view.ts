import { h } from '../dom/h';

/** A run or stage state as a coloured badge; the class carries the state for styles and tests. */
export function stateBadge(state: string, title?: string): HTMLElement {
  return h('span', { class: `badge state-${state}`, title, 'data-state': state }, state.replace('_', ' '));
}
