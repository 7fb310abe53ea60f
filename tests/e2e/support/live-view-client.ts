/**
 * A live-view viewer as the console is one: a ticket from the api over REST, then
 * the api's WebSocket at the gate's stable path (docs/live-view.md). It keeps
 * what the relay sent in arrival order, pictures and JSON messages interleaved,
 * so a test can ask for "a picture of the popup" (one after the popup's
 * address arrived), and it sends input at CSS-pixel positions of the page shown,
 * mapped into the picture with the newest `frame-meta`.
 */
import type { LiveViewClientMessage, LiveViewFrameMetaMessage, LiveViewMode, LiveViewServerMessage } from '@stageflow/contracts';
import WebSocket from 'ws';
import { api, stackUrl } from './stageflow-client';

export type Received = { kind: 'message'; message: LiveViewServerMessage } | { kind: 'picture'; bytes: Buffer };

export interface Ticket {
  ticket: string;
  mode: LiveViewMode;
  expiresAt: string;
  path: string;
}

/** A refused upgrade: the HTTP status and the `{code, message}` body. */
export class LiveViewRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: { code?: string; message?: string },
  ) {
    super(`live-view WebSocket refused: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

export async function issueTicket(runId: string, stageId: string, mode: LiveViewMode): Promise<Ticket> {
  const res = await api<Ticket>('POST', `/api/runs/${runId}/stages/${stageId}/live-view/tickets`, { mode });
  if (res.status !== 201) throw new Error(`POST live-view ticket (${mode}) for ${runId}/${stageId} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export class LiveViewClient {
  readonly received: Received[] = [];
  closeCode?: number;
  private readonly listeners = new Set<() => void>();

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      this.received.push(isBinary ? { kind: 'picture', bytes: data } : { kind: 'message', message: JSON.parse(String(data)) as LiveViewServerMessage });
      this.notify();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      this.notify();
    });
    socket.on('error', () => undefined);
  }

  /** Issues a ticket and opens the view with it, the way the console's gate does. */
  static async open(runId: string, stageId: string, mode: LiveViewMode): Promise<LiveViewClient> {
    const ticket = await issueTicket(runId, stageId, mode);
    return LiveViewClient.connect(ticket);
  }

  static connect(ticket: Ticket): Promise<LiveViewClient> {
    const url = `${stackUrl().replace(/^http/, 'ws')}${ticket.path}?ticket=${encodeURIComponent(ticket.ticket)}`;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new LiveViewClient(socket)));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += String(c)));
        res.on('end', () => {
          let parsed: LiveViewRefused['body'] = {};
          try {
            parsed = JSON.parse(body) as LiveViewRefused['body'];
          } catch {
            parsed = { message: body };
          }
          reject(new LiveViewRefused(res.statusCode ?? 0, parsed));
        });
      });
      socket.once('error', reject);
    });
  }

  /** Position in {@link received}: pass it as `from` to wait only for what comes after now. */
  get mark(): number {
    return this.received.length;
  }

  /** The JSON messages received, in order. */
  get messages(): LiveViewServerMessage[] {
    return this.received.flatMap((r) => (r.kind === 'message' ? [r.message] : []));
  }

  send(message: LiveViewClientMessage): void {
    this.socket.send(JSON.stringify(message));
  }

  /** The first message from `from` on of `type` that matches `also`. */
  async next<T extends LiveViewServerMessage['type']>(
    type: T,
    also: (m: Extract<LiveViewServerMessage, { type: T }>) => boolean = () => true,
    from = 0,
    timeoutMs = 30_000,
  ): Promise<Extract<LiveViewServerMessage, { type: T }>> {
    let found: Extract<LiveViewServerMessage, { type: T }> | undefined;
    await this.until(
      () => {
        for (const r of this.received.slice(from)) {
          if (r.kind === 'message' && r.message.type === type && also(r.message as Extract<LiveViewServerMessage, { type: T }>)) {
            found = r.message as Extract<LiveViewServerMessage, { type: T }>;
            return true;
          }
        }
        return false;
      },
      timeoutMs,
      () => `a "${type}" message from #${from}`,
    );
    return found as Extract<LiveViewServerMessage, { type: T }>;
  }

  /**
   * Waits for a picture received from `from` on, and returns it with the geometry
   * that describes it: the newest `frame-meta` before it (the relay sends a page's
   * geometry before its first picture and again whenever it changes).
   */
  async pictureAfter(from: number, timeoutMs = 30_000): Promise<{ bytes: Buffer; meta: LiveViewFrameMetaMessage }> {
    let found: { bytes: Buffer; meta: LiveViewFrameMetaMessage } | undefined;
    await this.until(
      () => {
        let meta: LiveViewFrameMetaMessage | undefined;
        for (const [i, r] of this.received.entries()) {
          if (r.kind === 'message' && r.message.type === 'frame-meta') meta = r.message;
          else if (r.kind === 'picture' && meta && i >= from) {
            found = { bytes: r.bytes, meta };
            return true;
          }
        }
        return false;
      },
      timeoutMs,
      () => `a picture (with its frame-meta) from #${from}`,
    );
    return found as { bytes: Buffer; meta: LiveViewFrameMetaMessage };
  }

  /** The position just after the first message of `type` from `from` on that matches: pass it to {@link pictureAfter}. */
  async after<T extends LiveViewServerMessage['type']>(
    type: T,
    also: (m: Extract<LiveViewServerMessage, { type: T }>) => boolean = () => true,
    from = 0,
    timeoutMs = 30_000,
  ): Promise<number> {
    const message = await this.next(type, also, from, timeoutMs);
    return this.received.findIndex((r) => r.kind === 'message' && r.message === message) + 1;
  }

  /** The newest geometry: it describes the pictures of the page shown now. */
  get geometry(): LiveViewFrameMetaMessage {
    const meta = this.messages.filter((m): m is LiveViewFrameMetaMessage => m.type === 'frame-meta').pop();
    if (!meta) throw new Error('no frame-meta received yet: there is no picture to point at');
    return meta;
  }

  /**
   * A left click at a point of the page given in CSS pixels, sent as the fraction
   * of the picture a person would click (the inverse of the relay's mapping:
   * docs/live-view.md, "Mapping a point to the page").
   */
  clickAt(cssX: number, cssY: number): void {
    const { deviceWidth, deviceHeight, offsetTop, pageScaleFactor } = this.geometry;
    const x = (cssX * pageScaleFactor) / deviceWidth;
    const y = (cssY * pageScaleFactor + offsetTop) / deviceHeight;
    if (x < 0 || x > 1 || y < 0 || y > 1) throw new Error(`(${cssX}, ${cssY}) is outside the picture (${deviceWidth} × ${deviceHeight})`);
    this.send({ type: 'mouse', action: 'click', x, y });
  }

  /** Types `text` as key presses, one character each, as a person at the keyboard does. */
  typeKeys(text: string): void {
    for (const key of text) this.send({ type: 'key', action: 'press', key });
  }

  press(key: string): void {
    this.send({ type: 'key', action: 'press', key });
  }

  async closed(timeoutMs = 30_000): Promise<number> {
    await this.until(() => this.closeCode !== undefined, timeoutMs, () => 'the socket to close');
    return this.closeCode as number;
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
  }

  /** What arrived, without the pictures' bytes: for failure messages. */
  describe(from = 0): string {
    return this.received
      .slice(from)
      .map((r, i) => `#${from + i} ${r.kind === 'picture' ? `picture (${r.bytes.length} B)` : JSON.stringify(r.message).slice(0, 300)}`)
      .join('\n');
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
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
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what()}; received:\n${this.describe().slice(-4000)}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }
}

/** Whether bytes are a JPEG (SOI marker and the first marker after it). */
export function isJpeg(bytes: Buffer): boolean {
  return bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}
