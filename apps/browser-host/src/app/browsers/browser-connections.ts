import { Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { CdpPublisher } from './cdp-publisher';
import { CdpConnection } from '@stageflow/cdp';

const CONNECT_OPTIONS = { connectTimeoutMs: 3000, callTimeoutMs: 10_000 };

/**
 * One kept browser-level CDP connection per running browser, by its `wsEndpoint`
 * (a restarted browser has a new one). Opened when a shared browser is launched or
 * adopted, used for its tabs, closed when the browser closes or is killed, and at
 * shutdown (the browser itself keeps running). A connection that dropped stays here
 * closed until {@link ensure} replaces it or {@link drop} removes it.
 */
@Injectable()
export class BrowserConnections implements OnModuleDestroy {
  private readonly open = new Map<string, CdpConnection>();
  private readonly connecting = new Map<string, Promise<CdpConnection>>();

  constructor(@Optional() private readonly publisher?: CdpPublisher) {}

  /** The kept connection of the browser while it is open; `undefined` if there is none or it dropped. */
  live(wsEndpoint: string): CdpConnection | undefined {
    const cdp = this.open.get(wsEndpoint);
    return cdp && !cdp.isClosed ? cdp : undefined;
  }

  /** The kept connection, (re)connecting when there is none or it dropped. Throws when the browser does not accept it. */
  async ensure(wsEndpoint: string): Promise<CdpConnection> {
    const current = this.live(wsEndpoint);
    if (current) return current;
    let pending = this.connecting.get(wsEndpoint);
    if (!pending) {
      pending = CdpConnection.connect(wsEndpoint, CONNECT_OPTIONS)
        .then((cdp) => {
          this.open.set(wsEndpoint, cdp);
          return cdp;
        })
        .finally(() => this.connecting.delete(wsEndpoint));
      this.connecting.set(wsEndpoint, pending);
    }
    return pending;
  }

  /** Closes and forgets the browser's kept connection (the browser keeps running). */
  async drop(wsEndpoint: string): Promise<void> {
    const pending = this.connecting.get(wsEndpoint);
    if (pending) await pending.catch(() => undefined);
    const cdp = this.open.get(wsEndpoint);
    this.open.delete(wsEndpoint);
    await cdp?.close();
    await this.publisher?.unpublish(wsEndpoint);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...new Set([...this.open.keys(), ...this.connecting.keys()])].map((endpoint) => this.drop(endpoint)));
  }
}
