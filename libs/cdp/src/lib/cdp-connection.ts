import WebSocket from 'ws';
import { CdpError, isCdpError } from './cdp.error';
import { normalizeCdpEndpoint } from './cdp-endpoint';
import { withTimeout } from './with-timeout';

/** A target as `Target.getTargets` / `Target.targetCreated` describe it. */
export interface TargetInfo {
  targetId: string;
  /** `page`, `iframe`, `worker`, `shared_worker`, `service_worker`, `browser`, `tab`, `other`… */
  type: string;
  title: string;
  url: string;
  /** Whether any client is attached (not only this one). */
  attached: boolean;
  openerId?: string;
  browserContextId?: string;
}

export interface CdpConnectOptions {
  /**
   * Bound on the WebSocket handshake.
   * @defaultValue 5000
   */
  connectTimeoutMs?: number;
  /**
   * Default bound on every {@link CdpConnection.send}; a call can set its own.
   * @defaultValue 10000
   */
  callTimeoutMs?: number;
  /**
   * Receives errors thrown by event listeners. A throwing listener is isolated so it
   * cannot stop the message loop for everyone else.
   * @defaultValue ignore
   */
  onListenerError?: (error: unknown, method: string) => void;
}

export interface CdpCallOptions {
  /** Flattened session to send on (from {@link CdpConnection.attachToTab}); omit for the browser target. */
  sessionId?: string;
  /** Overrides the connection's `callTimeoutMs` for this call. */
  timeoutMs?: number;
}

export type CdpEventListener<T = unknown> = (params: T, sessionId: string | undefined) => void;

interface PendingCall {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
}

interface IncomingMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code?: number; message?: string; data?: string };
  sessionId?: string;
}

const NO_SUCH_TARGET = /no target with given id/i;

/**
 * One WebSocket to a browser's CDP endpoint, usually the browser-level one
 * (`ws://127.0.0.1:<port>/devtools/browser/<id>`), with flattened sessions for tabs.
 *
 * Every call has a timeout, and calls still waiting when the socket closes fail
 * with `cdp_closed` instead of hanging: a browser that dies or a page blocked by a JS
 * dialog never leaves a caller waiting forever.
 */
export class CdpConnection {
  private nextId = 1;
  private readonly pending = new Map<number, PendingCall>();
  private readonly listeners = new Map<string, Set<CdpEventListener>>();
  private readonly closeListeners = new Set<() => void>();
  private readonly closedPromise: Promise<void>;
  private closedFlag = false;

  private constructor(
    private readonly ws: WebSocket,
    /** The endpoint this connection talks to. */
    readonly endpoint: string,
    private readonly callTimeoutMs: number,
    private readonly onListenerError: (error: unknown, method: string) => void,
  ) {
    ws.on('message', (data) => this.handleMessage(String(data)));
    this.closedPromise = new Promise((resolve) => {
      ws.once('close', () => {
        this.closedFlag = true;
        for (const [id, call] of this.pending) {
          this.pending.delete(id);
          call.reject(
            new CdpError('cdp_closed', `The browser connection closed while ${call.method} was waiting for an answer.`, {
              method: call.method,
            }),
          );
        }
        for (const listener of this.closeListeners) this.safely(listener, 'close');
        resolve();
      });
    });
    // A socket error is followed by 'close'; without a listener it would crash the process.
    ws.on('error', () => undefined);
    if (ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED) ws.terminate();
  }

  /**
   * Opens a connection. `localhost` in the endpoint is rewritten to `127.0.0.1`.
   *
   * @throws CdpError `cdp_unreachable` (refused, not a CDP endpoint) or `cdp_timeout`.
   */
  static async connect(endpoint: string, options: CdpConnectOptions = {}): Promise<CdpConnection> {
    const url = normalizeCdpEndpoint(endpoint);
    const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    // Chrome does not speak permessage-deflate; screenshots can be tens of MB.
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    const opened = new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => {
        reject(new CdpError('cdp_unreachable', `${url} is not a CDP endpoint (HTTP ${res.statusCode}).`, { endpoint: url }));
        ws.terminate();
      });
      ws.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new CdpError('cdp_unreachable', `Cannot connect to the browser at ${url} (${error.code ?? error.message}).`, {
            endpoint: url,
          }),
        ),
      );
    });
    ws.on('error', () => undefined);
    await withTimeout(opened, connectTimeoutMs, `Connecting to ${url}`, () => ws.terminate());
    return new CdpConnection(ws, url, options.callTimeoutMs ?? 10_000, options.onListenerError ?? (() => undefined));
  }

  /** True once the socket has closed; every later call fails with `cdp_closed`. */
  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** Resolves when the socket closes, for any reason. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /**
   * Sends one CDP command and waits (bounded) for its result.
   *
   * @throws CdpError `cdp_timeout`, `cdp_closed`, or `cdp_protocol_error` (details carry Chrome's code and message).
   */
  send<T = Record<string, unknown>>(method: string, params: object = {}, options: CdpCallOptions = {}): Promise<T> {
    if (this.closedFlag || this.ws.readyState !== WebSocket.OPEN) {
      return Promise.reject(new CdpError('cdp_closed', `The browser connection is closed; ${method} was not sent.`, { method }));
    }
    const id = this.nextId++;
    const answer = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (result: unknown) => void, reject });
    });
    const message: Record<string, unknown> = { id, method, params };
    if (options.sessionId) message['sessionId'] = options.sessionId;
    this.ws.send(JSON.stringify(message), (error) => {
      if (!error) return;
      const call = this.pending.get(id);
      this.pending.delete(id);
      call?.reject(new CdpError('cdp_closed', `Sending ${method} failed: ${error.message}`, { method }));
    });
    return withTimeout(answer, options.timeoutMs ?? this.callTimeoutMs, method, () => this.pending.delete(id));
  }

  /**
   * Subscribes to a CDP event on every session of this connection (the listener gets
   * the session id, `undefined` for the browser target). Returns the unsubscribe function.
   */
  on<T = Record<string, unknown>>(method: string, listener: CdpEventListener<T>): () => void {
    let set = this.listeners.get(method);
    if (!set) {
      set = new Set();
      this.listeners.set(method, set);
    }
    const entry = listener as CdpEventListener;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  /**
   * Waits (bounded) for the next `method` event that matches.
   *
   * @throws CdpError `cdp_timeout` or `cdp_closed`.
   */
  waitForEvent<T = Record<string, unknown>>(
    method: string,
    options: { sessionId?: string; predicate?: (params: T) => boolean; timeoutMs?: number } = {},
  ): Promise<T> {
    let off = (): void => undefined;
    let offClose = (): void => undefined;
    const seen = new Promise<T>((resolve, reject) => {
      off = this.on<T>(method, (params, sessionId) => {
        if (options.sessionId !== undefined && sessionId !== options.sessionId) return;
        if (options.predicate && !options.predicate(params)) return;
        resolve(params);
      });
      offClose = this.onClose(() =>
        reject(new CdpError('cdp_closed', `The browser connection closed while waiting for ${method}.`, { method })),
      );
    });
    const cleanup = (): void => {
      off();
      offClose();
    };
    return withTimeout(seen, options.timeoutMs ?? this.callTimeoutMs, `Waiting for ${method}`, cleanup).finally(cleanup);
  }

  /** Runs `listener` once when the socket closes (immediately if it already has). Returns the unsubscribe function. */
  onClose(listener: () => void): () => void {
    if (this.closedFlag) {
      this.safely(listener, 'close');
      return () => undefined;
    }
    this.closeListeners.add(listener);
    return () => {
      this.closeListeners.delete(listener);
    };
  }

  /** Closes the socket (bounded); the browser keeps running. */
  async close(): Promise<void> {
    if (this.closedFlag) return;
    this.ws.close();
    await withTimeout(this.closedPromise, 2000, 'Closing the CDP connection', () => this.ws.terminate()).catch(
      () => undefined,
    );
  }

  /**
   * Opens a new tab (`Target.createTarget`) and returns its target id. With
   * `newWindow`, the tab gets a window of its own: Chrome draws only the front tab of
   * a window, so a tab behind another one is `hidden` (no screencast frames,
   * throttled timers, paused animations).
   */
  async createTab(url = 'about:blank', options: CdpCallOptions & { newWindow?: boolean } = {}): Promise<string> {
    const { newWindow, ...callOptions } = options;
    const params = newWindow ? { url, newWindow: true } : { url };
    const { targetId } = await this.send<{ targetId: string }>('Target.createTarget', params, callOptions);
    return targetId;
  }

  /** Attaches to a tab with a flattened session (`Target.attachToTarget {flatten: true}`) and returns the session id. */
  async attachToTab(targetId: string, options: CdpCallOptions = {}): Promise<string> {
    const { sessionId } = await this.send<{ sessionId: string }>(
      'Target.attachToTarget',
      { targetId, flatten: true },
      options,
    );
    return sessionId;
  }

  /**
   * Closes a tab and waits (bounded) until the browser no longer lists it:
   * `Target.closeTarget` answers before the tab is actually gone. A tab that is
   * already gone counts as closed.
   *
   * @throws CdpError `cdp_timeout` when the tab is still there after the timeout
   *   (e.g. a `beforeunload` dialog nobody answered).
   */
  async closeTab(targetId: string, options: CdpCallOptions = {}): Promise<void> {
    try {
      await this.send('Target.closeTarget', { targetId }, options);
    } catch (error) {
      if (isCdpError(error, 'cdp_protocol_error') && NO_SUCH_TARGET.test(error.message)) return;
      throw error;
    }
    const timeoutMs = options.timeoutMs ?? this.callTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { targetInfos } = await this.send<{ targetInfos: TargetInfo[] }>('Target.getTargets', {}, options);
      if (!targetInfos.some((t) => t.targetId === targetId)) return;
      if (Date.now() >= deadline) {
        throw new CdpError('cdp_timeout', `Tab ${targetId} was still open ${timeoutMs} ms after closing it.`, {
          targetId,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The browser's page targets (tabs and popups), across all clients. */
  async listPages(options: CdpCallOptions = {}): Promise<TargetInfo[]> {
    const { targetInfos } = await this.send<{ targetInfos: TargetInfo[] }>('Target.getTargets', {}, options);
    return targetInfos.filter((t) => t.type === 'page');
  }

  private handleMessage(text: string): void {
    let message: IncomingMessage;
    try {
      message = JSON.parse(text) as IncomingMessage;
    } catch {
      return;
    }
    if (typeof message.id === 'number') {
      const call = this.pending.get(message.id);
      // An answer after its timeout has no one waiting for it any more.
      if (!call) return;
      this.pending.delete(message.id);
      if (message.error) {
        call.reject(
          new CdpError('cdp_protocol_error', `${call.method} failed: ${message.error.message ?? 'unknown error'}`, {
            method: call.method,
            cdpCode: message.error.code,
            cdpMessage: message.error.message,
          }),
        );
      } else {
        call.resolve(message.result ?? {});
      }
      return;
    }
    if (typeof message.method !== 'string') return;
    const set = this.listeners.get(message.method);
    if (!set) return;
    for (const listener of [...set]) {
      this.safely(() => listener(message.params ?? {}, message.sessionId), message.method);
    }
  }

  private safely(fn: () => void, method: string): void {
    try {
      fn();
    } catch (error) {
      this.onListenerError(error, method);
    }
  }
}
