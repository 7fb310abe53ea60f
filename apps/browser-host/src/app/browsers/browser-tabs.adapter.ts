import { Injectable } from '@nestjs/common';
import { CdpConnection, isCdpError } from '@stageflow/cdp';
import { BrowserConnections } from './browser-connections';

const CDP_OPTIONS = { connectTimeoutMs: 5000, callTimeoutMs: 10_000 };

/**
 * Every tab the Host makes gets a window of its own. Chrome draws only the front tab
 * of each window; a stage's tab behind a spare or a parallel stage's tab would be
 * `hidden`: its live view would get no frames, its timers would be throttled.
 */
const OWN_WINDOW = { newWindow: true } as const;

/**
 * Tabs over CDP: on the browser's kept connection ({@link BrowserConnections}) when it
 * has an open one, else on a short-lived connection per operation. No socket per tab.
 */
export interface OpenTabOptions {
  /**
   * Keep one `about:blank` tab ready in this browser (a run's shared browser): the
   * next open takes it instead of waiting for `Target.createTarget`, and a new spare
   * is made in the background. Only with the browser's kept connection.
   */
  keepSpare?: boolean;
  /** Open the tab at this address instead of `about:blank` (a login gate's page); never a spare. */
  url?: string;
}

export abstract class BrowserTabs {
  /** Opens an `about:blank` tab (or takes the ready spare) and returns its target id. */
  abstract open(wsEndpoint: string, options?: OpenTabOptions): Promise<string>;
  /**
   * Closes the given tabs; ones already gone count as closed. With `keepOnePage`, a
   * browser that would be left with no page first gets an `about:blank`: Chrome quits
   * when its last window closes, and the run's browser must outlive the stage.
   */
  abstract close(wsEndpoint: string, targetIds: readonly string[], keepOnePage: boolean): Promise<void>;
  /** Whether the tab is still a page of the browser. */
  abstract exists(wsEndpoint: string, targetId: string): Promise<boolean>;
  /**
   * Opens the tab's current address in a new tab of the same browser (same cookies)
   * and returns the new tab and the address; the old tab is left open.
   *
   * @throws CdpError `cdp_protocol_error` when the tab is gone.
   */
  abstract reopen(wsEndpoint: string, targetId: string): Promise<{ targetId: string; url: string }>;
}

@Injectable()
export class CdpBrowserTabs extends BrowserTabs {
  /** The spare tab of each shared browser (being made, or ready), by its kept connection. */
  private readonly spares = new Map<CdpConnection, Promise<string | undefined>>();

  constructor(private readonly connections: BrowserConnections) {
    super();
  }

  async open(wsEndpoint: string, options: OpenTabOptions = {}): Promise<string> {
    const { url } = options;
    if (url) return this.with(wsEndpoint, (cdp) => cdp.createTab(url, OWN_WINDOW));
    const kept = options.keepSpare ? this.connections.live(wsEndpoint) : undefined;
    if (!kept) return this.with(wsEndpoint, (cdp) => cdp.createTab('about:blank', OWN_WINDOW));
    const spare = await this.takeSpare(kept);
    this.makeSpare(kept);
    return spare ?? kept.createTab('about:blank', OWN_WINDOW);
  }

  /**
   * The ready spare, if there is one and the browser still lists it. Waiting for a
   * spare still being made is never slower than making a tab now.
   */
  private async takeSpare(cdp: CdpConnection): Promise<string | undefined> {
    const pending = this.spares.get(cdp);
    if (!pending) return undefined;
    this.spares.delete(cdp);
    const targetId = await pending;
    if (!targetId) return undefined;
    try {
      const { targetInfo } = await cdp.send<{ targetInfo: { type: string; url: string } }>('Target.getTargetInfo', { targetId });
      return targetInfo.type === 'page' && targetInfo.url === 'about:blank' ? targetId : undefined;
    } catch {
      return undefined;
    }
  }

  private makeSpare(cdp: CdpConnection): void {
    if (this.spares.has(cdp)) return;
    this.spares.set(cdp, cdp.createTab('about:blank', OWN_WINDOW).catch(() => undefined));
    // A browser that closes (run end, crash) takes its spare with it.
    cdp.onClose(() => this.spares.delete(cdp));
  }

  async close(wsEndpoint: string, targetIds: readonly string[], keepOnePage: boolean): Promise<void> {
    const closing = new Set(targetIds);
    if (closing.size === 0) return;
    await this.with(wsEndpoint, async (cdp) => {
      const pages = await cdp.listPages();
      if (keepOnePage && !pages.some((p) => !closing.has(p.targetId))) await cdp.createTab('about:blank', OWN_WINDOW);
      for (const targetId of closing) {
        if (pages.some((p) => p.targetId === targetId)) await cdp.closeTab(targetId);
      }
    });
  }

  async exists(wsEndpoint: string, targetId: string): Promise<boolean> {
    return this.with(wsEndpoint, async (cdp) => (await cdp.listPages()).some((p) => p.targetId === targetId));
  }

  async reopen(wsEndpoint: string, targetId: string): Promise<{ targetId: string; url: string }> {
    return this.with(wsEndpoint, async (cdp) => {
      const { targetInfo } = await cdp.send<{ targetInfo: { url: string; browserContextId?: string } }>('Target.getTargetInfo', { targetId });
      // The old tab's context: a throw-away browser's allowlist and a profile's cookies live there.
      const params = targetInfo.browserContextId
        ? { url: targetInfo.url, browserContextId: targetInfo.browserContextId, ...OWN_WINDOW }
        : { url: targetInfo.url, ...OWN_WINDOW };
      const { targetId: created } = await cdp.send<{ targetId: string }>('Target.createTarget', params);
      return { targetId: created, url: targetInfo.url };
    });
  }

  private async with<T>(wsEndpoint: string, work: (cdp: CdpConnection) => Promise<T>): Promise<T> {
    const kept = this.connections.live(wsEndpoint);
    if (kept) return work(kept);
    const cdp = await CdpConnection.connect(wsEndpoint, CDP_OPTIONS);
    try {
      return await work(cdp);
    } finally {
      await cdp.close();
    }
  }
}

/** A CDP failure that means "the browser is not there" rather than a bug. */
export function isBrowserGone(error: unknown): boolean {
  return isCdpError(error, 'cdp_unreachable', 'cdp_closed', 'cdp_timeout');
}
