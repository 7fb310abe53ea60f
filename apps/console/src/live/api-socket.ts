import type { RunEvent } from '../api/api.types';
import {
  acceptEvent,
  messageKey,
  noteSubscribed,
  parseServerMessage,
  subscribeMessage,
  subscriptionKey,
  type ServerMessage,
  type Subscription,
} from './subscription';

export type SocketStatus = 'connecting' | 'live' | 'reconnecting' | 'stopped';

export interface SubscriptionHandlers {
  /** A new event, in order, never twice. */
  onEvent(event: RunEvent): void;
  /** The server refused the subscription (e.g. `run_not_found`). */
  onError?(code: string, message: string): void;
  /** The subscription started (also after each reconnect): from here on nothing is missed. */
  onSubscribed?(): void;
}

interface Entry {
  sub: Subscription;
  handlers: SubscriptionHandlers;
}

/** Waits between reconnects: quick at first, then every few seconds. */
const BACKOFF_MS = [250, 500, 1000, 2000, 4000];
/** A subscription whose Redis read failed on the server is re-made after this long. */
const RESUBSCRIBE_MS = 1000;

/**
 * The api's event WebSocket (`/api/ws`) for the whole console: one
 * connection, reconnected forever with backoff; each subscription resumes
 * after the last event it handed on (seq per run, cursor for all runs).
 * The token goes in `?token=`, the only way a browser WebSocket can carry it.
 */
export class ApiSocket {
  private ws?: WebSocket;
  private readonly entries = new Map<string, Entry>();
  private readonly statusListeners = new Set<(status: SocketStatus) => void>();
  private status: SocketStatus = 'stopped';
  private attempt = 0;
  private timer?: ReturnType<typeof setTimeout>;

  constructor(private readonly url: () => string) {}

  start(): void {
    if (this.status !== 'stopped') return;
    this.attempt = 0;
    this.connect();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.setStatus('stopped');
    const ws = this.ws;
    this.ws = undefined;
    ws?.close(1000, 'console closed');
  }

  /** Events of one run after `after` (0 = its whole history first); undefined = only new ones. */
  subscribeRun(runId: string, after: number | undefined, handlers: SubscriptionHandlers): () => void {
    return this.add({ kind: 'run', runId, after }, handlers);
  }

  /** Events of every run from now on. */
  subscribeAll(handlers: SubscriptionHandlers): () => void {
    return this.add({ kind: 'all' }, handlers);
  }

  onStatus(listener: (status: SocketStatus) => void): () => void {
    this.statusListeners.add(listener);
    listener(this.status);
    return () => this.statusListeners.delete(listener);
  }

  private add(sub: Subscription, handlers: SubscriptionHandlers): () => void {
    const key = subscriptionKey(sub);
    const entry: Entry = { sub, handlers };
    // One subscriber per key: a page that subscribes again replaces its earlier self.
    this.entries.set(key, entry);
    this.send(subscribeMessage(sub));
    return () => {
      if (this.entries.get(key) !== entry) return;
      this.entries.delete(key);
      this.send(sub.kind === 'run' ? { type: 'unsubscribe', run: sub.runId } : { type: 'unsubscribe', all: true });
    };
  }

  private connect(): void {
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting');
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.setStatus('live');
      for (const { sub } of this.entries.values()) this.send(subscribeMessage(sub));
    };
    ws.onmessage = (message) => {
      if (this.ws !== ws || typeof message.data !== 'string') return;
      const msg = parseServerMessage(message.data);
      if (msg) this.dispatch(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      if (this.status === 'stopped') return;
      this.setStatus('reconnecting');
      const wait = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt++;
      this.timer = setTimeout(() => this.connect(), wait);
    };
  }

  private dispatch(msg: ServerMessage): void {
    const key = messageKey(msg);
    const entry = key === undefined ? undefined : this.entries.get(key);
    if (!entry) return;
    if (msg.type === 'subscribed') {
      noteSubscribed(entry.sub, msg);
      entry.handlers.onSubscribed?.();
    }
    else if (msg.type === 'event') {
      if (acceptEvent(entry.sub, msg)) entry.handlers.onEvent(msg.event);
    } else if (msg.type === 'error') {
      if (msg.code === 'subscription_failed') {
        // Its Redis read failed and it has ended: make it again from where it got to.
        setTimeout(() => this.entries.get(key as string) === entry && this.send(subscribeMessage(entry.sub)), RESUBSCRIBE_MS);
      } else entry.handlers.onError?.(msg.code, msg.message);
    }
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  private setStatus(status: SocketStatus): void {
    if (this.status === status) return;
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }
}

/** `ws://<this host>/api/ws?token=…` (wss under https). */
export function apiSocketUrl(token: string | undefined, loc: Pick<Location, 'protocol' | 'host'> = location): string {
  const base = `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}/api/ws`;
  return token ? `${base}?token=${encodeURIComponent(token)}` : base;
}
