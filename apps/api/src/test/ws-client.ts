import WebSocket from 'ws';

/** A test WebSocket client that queues what it receives and waits for it with a timeout. */
export class WsTestClient {
  readonly received: Record<string, unknown>[] = [];
  private readonly listeners = new Set<() => void>();
  closeCode?: number;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as Record<string, unknown>);
      for (const listener of [...this.listeners]) listener();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      for (const listener of [...this.listeners]) listener();
    });
  }

  static connect(url: string, options: WebSocket.ClientOptions = {}): Promise<WsTestClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, options);
      socket.once('open', () => resolve(new WsTestClient(socket)));
      socket.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, res })));
      socket.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Waits until `count` messages (in total, from the start) have arrived; returns them all. */
  async waitForCount(count: number, timeoutMs = 3000): Promise<Record<string, unknown>[]> {
    await this.until(() => this.received.length >= count, timeoutMs, `${count} messages (have ${this.received.length})`);
    return this.received.slice(0, count);
  }

  /** Waits for the first message (from `from` on) matching `predicate`. */
  async waitFor(predicate: (m: Record<string, unknown>) => boolean, timeoutMs = 3000, from = 0): Promise<Record<string, unknown>> {
    let found: Record<string, unknown> | undefined;
    await this.until(() => (found = this.received.slice(from).find(predicate)) !== undefined, timeoutMs, 'a matching message');
    return found as Record<string, unknown>;
  }

  async waitForClose(timeoutMs = 3000): Promise<number> {
    await this.until(() => this.closeCode !== undefined, timeoutMs, 'the socket to close');
    return this.closeCode as number;
  }

  /** Lets `ms` pass and returns what arrived meanwhile (for "nothing more arrives" checks). */
  async quietFor(ms: number): Promise<Record<string, unknown>[]> {
    const before = this.received.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.received.slice(before);
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise((resolve) => this.socket.once('close', resolve));
    this.socket.close();
    await closed;
  }

  private until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}; received: ${JSON.stringify(this.received).slice(0, 2000)}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }
}

/** Events (only) among received messages. */
export function eventsOf(messages: Record<string, unknown>[]): { seq: number; type: string; runId: string }[] {
  return messages.filter((m) => m['type'] === 'event').map((m) => m['event'] as { seq: number; type: string; runId: string });
}
