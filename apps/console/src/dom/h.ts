/**
 * The console's only way to build DOM: elements from a tag, attributes and
 * children, where every string child becomes a text node. Nothing here parses
 * HTML, so text from pages, stages or people (log lines, page dialogs, gate
 * messages) is always shown as text (lint forbids innerHTML and friends).
 */
export type Child = Node | string | number | null | undefined | false | Child[];

type Listener<E extends Event = Event> = (event: E) => void;

export interface Attrs {
  class?: string;
  /** Event listeners by event name (`click`, `submit`, …). */
  on?: { [K in keyof HTMLElementEventMap]?: Listener<HTMLElementEventMap[K]> };
  [attribute: string]: unknown;
}

/** `href`/`src` values the console sets: its own routes, the api, blob downloads. Anything else is a bug. */
const SAFE_URL = /^(\/(?!\/)|blob:|#)/;

function setAttributes(el: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'on') {
      for (const [type, listener] of Object.entries(value as Record<string, Listener>)) el.addEventListener(type, listener);
      continue;
    }
    if (/^on/i.test(name)) throw new Error(`h(): "${name}" is an inline handler; pass it under "on"`);
    if (value === undefined || value === null || value === false) continue;
    if ((name === 'href' || name === 'src' || name === 'action') && !SAFE_URL.test(String(value))) {
      throw new Error(`h(): refusing ${name}="${String(value)}"`);
    }
    el.setAttribute(name, value === true ? '' : String(value));
  }
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, ...child);
    else if (typeof child === 'string' || typeof child === 'number') parent.appendChild(document.createTextNode(String(child)));
    else parent.appendChild(child);
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  append(el, ...children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setAttributes(el, attrs);
  append(el, ...children);
  return el;
}

/** Replaces an element's children. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/** Sets text only when it changed (keeps selections and avoids layout work on live updates). */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}
