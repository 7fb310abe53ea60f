/** A page the view shows or may return to: the stage's tab, or a popup it (or a popup of it) opened. */
export interface ViewedPage {
  targetId: string;
  /** The relay's flattened CDP session on it. */
  sessionId: string;
  url: string;
}

/** How long after `Page.windowOpen` an opener-less new tab counts as that open's popup. */
export const WINDOW_OPEN_MATCH_MS = 5000;

/**
 * Which page the view shows. The stage's tab is at the bottom; a popup opened by a
 * page in the stack goes on top and is shown; when the shown popup closes, the view
 * returns to the page below it.
 *
 * Pages opened without an opener are matched instead: after `Page.windowOpen` of a page
 * in the stack (`window.open` with `noopener`), a new page with that URL; after a
 * viewer's middle-, Ctrl- or Shift-click (Chromium 156 sends no `windowOpen` for those,
 * checked), the next new page. Either within {@link WINDOW_OPEN_MATCH_MS}.
 */
export class ViewStack {
  private pages: ViewedPage[];
  /** Expected opener-less pages: with the URL `windowOpen` named, or any URL (`undefined`) after a viewer's click that opens one. */
  private pendingOpens: Array<{ url?: string; until: number }> = [];

  constructor(root: ViewedPage) {
    this.pages = [root];
  }

  get root(): ViewedPage {
    return this.pages[0];
  }

  get top(): ViewedPage {
    return this.pages[this.pages.length - 1];
  }

  /** Popups above the stage's tab. */
  get depth(): number {
    return this.pages.length - 1;
  }

  has(targetId: string): boolean {
    return this.pages.some((p) => p.targetId === targetId);
  }

  bySession(sessionId: string | undefined): ViewedPage | undefined {
    return sessionId === undefined ? undefined : this.pages.find((p) => p.sessionId === sessionId);
  }

  byTarget(targetId: string): ViewedPage | undefined {
    return this.pages.find((p) => p.targetId === targetId);
  }

  all(): readonly ViewedPage[] {
    return this.pages;
  }

  /** Whether a new page is a popup of the view: opened by a page in the stack, or matching a recent opener-less open. */
  isPopup(target: { targetId: string; openerId?: string; url: string }, now: number): boolean {
    if (this.has(target.targetId)) return false;
    if (target.openerId !== undefined) return this.has(target.openerId);
    return this.takePendingOpen(target.url, now);
  }

  /** `Page.windowOpen` on a page of the stack. */
  windowOpened(url: string, now: number): void {
    this.pendingOpens = [...this.pendingOpens.filter((o) => o.until > now), { url, until: now + WINDOW_OPEN_MATCH_MS }];
  }

  /** A viewer clicked in a way that opens a page without an opener (middle, Ctrl, Meta or Shift click). */
  openerlessClick(now: number): void {
    this.pendingOpens = [...this.pendingOpens.filter((o) => o.until > now), { until: now + WINDOW_OPEN_MATCH_MS }];
  }

  /** Whether an opener-less page with this URL may still be a popup (its URL is known only after it starts loading). */
  awaitsOpen(now: number): boolean {
    this.pendingOpens = this.pendingOpens.filter((o) => o.until > now);
    return this.pendingOpens.length > 0;
  }

  push(page: ViewedPage): void {
    this.pages.push(page);
  }

  /** Removes a closed page; returns whether the shown page changed. The stage's tab is never removed here. */
  remove(targetId: string): boolean {
    const index = this.pages.findIndex((p) => p.targetId === targetId);
    if (index <= 0) return false;
    const wasTop = index === this.pages.length - 1;
    this.pages.splice(index, 1);
    return wasTop;
  }

  setUrl(targetId: string, url: string): boolean {
    const page = this.byTarget(targetId);
    if (!page || page.url === url) return false;
    page.url = url;
    return true;
  }

  /** The stage's tab was replaced ("Reopen browser tab"): the view starts over on the new tab. Returns the pages left. */
  replaceRoot(root: ViewedPage): ViewedPage[] {
    const left = this.pages;
    this.pages = [root];
    this.pendingOpens = [];
    return left;
  }

  private takePendingOpen(url: string, now: number): boolean {
    let index = url ? this.pendingOpens.findIndex((o) => o.until > now && o.url === url) : -1;
    if (index < 0) index = this.pendingOpens.findIndex((o) => o.until > now && o.url === undefined);
    if (index < 0) return false;
    this.pendingOpens.splice(index, 1);
    return true;
  }
}
