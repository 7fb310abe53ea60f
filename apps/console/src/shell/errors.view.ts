import { ApiError } from '../api/api-client';
import { h, replaceChildren } from '../dom/h';

/** An api error as a person reads it: the api's message, and its code for reference. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.code.startsWith('http_') || error.code === 'network_error' ? error.message : `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}

/** A box for the error of the last action on a page; empty and hidden until one happens. */
export function errorBox(): { element: HTMLElement; show(error: unknown, ...extra: (Node | string)[]): void; clear(): void } {
  const element = h('div', { class: 'error', role: 'alert', hidden: true });
  return {
    element,
    show(error, ...extra) {
      replaceChildren(element, h('p', null, errorText(error)), ...extra);
      element.hidden = false;
    },
    clear() {
      replaceChildren(element);
      element.hidden = true;
    },
  };
}
