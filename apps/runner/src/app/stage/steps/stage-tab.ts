import type { StageSession } from '@stageflow/contracts';
import type { KeyDefinition } from './press-keys';

/** What an element lookup found, for what a step needs the element for. */
export type ProbeResult =
  | { state: 'ready'; x: number; y: number }
  | { state: 'missing' | 'hidden' | 'disabled' | 'readonly' }
  | { state: 'covered'; by: string }
  | { state: 'not_editable'; tag: string }
  | { state: 'invalid_selector'; message: string };

/**
 * - `present`: in the document;
 * - `visible`: has a box and is not hidden;
 * - `click`: visible, scrolled into view, enabled and the topmost element at its centre (x, y);
 * - `fill`: a visible, enabled, writable text field, then focused with its text selected;
 * - `focus`: visible, then focused.
 */
export type ProbePurpose = 'present' | 'visible' | 'click' | 'fill' | 'focus';

export type ReadResult =
  | { state: 'ready'; value: string }
  | { state: 'missing' | 'no_attribute' }
  | { state: 'invalid_selector'; message: string };

export interface NavigateResult {
  /** The browser's reason when the page could not be loaded (`net::ERR_…`). */
  errorText?: string;
  /** The new document's loader; absent for a same-document navigation (only the #hash changed). */
  loaderId?: string;
}

/**
 * The stage's own tab, as a steps stage drives it: one call per browser
 * round trip, each bounded by `timeoutMs`, no waiting for conditions (the
 * executor polls). Browser problems reject with the CDP lib's `CdpError`.
 */
export interface StageTab {
  navigate(url: string, timeoutMs: number): Promise<NavigateResult>;
  /** True once the document of `loaderId` fired its load event. */
  hasLoaded(loaderId: string): boolean;
  probe(selector: string, purpose: ProbePurpose, timeoutMs: number): Promise<ProbeResult>;
  clickAt(x: number, y: number, timeoutMs: number): Promise<void>;
  /** Types `text` into the focused element, replacing its selection. */
  insertText(text: string, timeoutMs: number): Promise<void>;
  pressKey(key: KeyDefinition, timeoutMs: number): Promise<void>;
  currentUrl(timeoutMs: number): Promise<string>;
  /** True when the page's visible text contains `text`. */
  showsText(text: string, timeoutMs: number): Promise<boolean>;
  /** The element's visible text (trimmed), or the value of `attribute`. */
  read(selector: string, attribute: string | undefined, timeoutMs: number): Promise<ReadResult>;
  /** A PNG of the viewport, or of the whole page. */
  screenshot(fullPage: boolean, timeoutMs: number): Promise<Buffer>;
  /** Ends this connection to the tab; the tab itself is browser-host's to close. */
  close(): Promise<void>;
}

/** Opens a {@link StageTab} on a stage session's tab. The only way the steps executor reaches a browser, so tests replace it. */
export interface StageTabConnector {
  /** `note` receives lines worth a place in the stage's log (a page dialog that was answered). */
  open(session: StageSession, note: (line: string) => void): Promise<StageTab>;
}

export const STAGE_TAB_CONNECTOR = Symbol('STAGE_TAB_CONNECTOR');

/** A lookup script threw in the page (the scripts catch their own errors, so the page was changing under it). */
export class PageScriptError extends Error {
  constructor(why: string) {
    super(`the page's script context failed: ${why}`);
    this.name = 'PageScriptError';
  }
}
