import type { RunEvent } from '../api/api.types';

/**
 * Where each WebSocket subscription resumes after a reconnect (docs/api.md,
 * "Resuming without gaps or duplicates"): a run subscription keeps the `seq`
 * of the last event it handed on, the all-runs subscription the last
 * `cursor`. Pure, so the resume rules are unit-tested.
 */
export type Subscription = RunSubscription | AllRunsSubscription;

export interface RunSubscription {
  kind: 'run';
  runId: string;
  /** Last seq handed on; undefined = "only new events" until the server says where it started. */
  after?: number;
}

export interface AllRunsSubscription {
  kind: 'all';
  /** Last cursor handed on; undefined = "only new events" until the server says where it started. */
  after?: string;
}

export type ServerMessage =
  | { type: 'subscribed'; run: string; after: number }
  | { type: 'subscribed'; all: true; after: string | null }
  | { type: 'event'; event: RunEvent; cursor?: string }
  | { type: 'unsubscribed'; run?: string; all?: true }
  | { type: 'error'; code: string; message: string; run?: string; all?: true };

export function subscriptionKey(sub: Subscription): string {
  return sub.kind === 'run' ? `run:${sub.runId}` : 'all';
}

/** The subscribe message for (re)connecting: from where this subscription got to. */
export function subscribeMessage(sub: Subscription): Record<string, unknown> {
  if (sub.kind === 'run') return sub.after === undefined ? { type: 'subscribe', run: sub.runId } : { type: 'subscribe', run: sub.runId, after: sub.after };
  return sub.after === undefined ? { type: 'subscribe', all: true } : { type: 'subscribe', all: true, after: sub.after };
}

/** The key of the subscription a server message belongs to, if any. */
export function messageKey(msg: ServerMessage): string | undefined {
  if (msg.type === 'event') return msg.cursor !== undefined ? 'all' : `run:${msg.event.runId}`;
  if ('all' in msg && msg.all) return 'all';
  if ('run' in msg && typeof msg.run === 'string') return `run:${msg.run}`;
  return undefined;
}

/**
 * `subscribed`: a subscription that asked for "only new" learns where it
 * started, so a reconnect resumes there instead of skipping what came between.
 * An all-runs stream that was empty (`after: null`) resumes from its oldest
 * kept event, which is then everything after the subscription began.
 */
export function noteSubscribed(sub: Subscription, msg: ServerMessage): void {
  if (msg.type !== 'subscribed' || sub.after !== undefined) return;
  if (sub.kind === 'run' && 'run' in msg) sub.after = msg.after;
  if (sub.kind === 'all' && 'all' in msg) sub.after = msg.after ?? '0';
}

/**
 * An event for this subscription: true if it is new (and moves the resume
 * point past it), false for one already handed on (a replay overlapping what
 * was seen, after a resubscribe).
 */
export function acceptEvent(sub: Subscription, msg: ServerMessage): boolean {
  if (msg.type !== 'event') return false;
  if (sub.kind === 'run') {
    if (msg.event.runId !== sub.runId) return false;
    if (sub.after !== undefined && msg.event.seq <= sub.after) return false;
    sub.after = msg.event.seq;
    return true;
  }
  if (msg.cursor === undefined) return false;
  if (sub.after !== undefined && compareCursors(msg.cursor, sub.after) <= 0) return false;
  sub.after = msg.cursor;
  return true;
}

/** Cursors are Redis stream ids, `<ms>-<n>`; "0" is before everything. */
export function compareCursors(a: string, b: string): number {
  const [am, an] = splitCursor(a);
  const [bm, bn] = splitCursor(b);
  return am !== bm ? (am < bm ? -1 : 1) : an === bn ? 0 : an < bn ? -1 : 1;
}

function splitCursor(cursor: string): [bigint, bigint] {
  const match = /^(\d+)(?:-(\d+))?$/.exec(cursor);
  if (!match) return [0n, 0n];
  return [BigInt(match[1]), BigInt(match[2] ?? '0')];
}

/** A text frame from /api/ws, checked before anything acts on it; undefined when it is not one we know. */
export function parseServerMessage(text: string): ServerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value['type'] !== 'string') return undefined;
  switch (value['type']) {
    case 'subscribed':
      if (value['all'] === true && (value['after'] === null || typeof value['after'] === 'string')) return value as ServerMessage;
      if (typeof value['run'] === 'string' && typeof value['after'] === 'number') return value as ServerMessage;
      return undefined;
    case 'event':
      return isRunEvent(value['event']) && (value['cursor'] === undefined || typeof value['cursor'] === 'string') ? (value as ServerMessage) : undefined;
    case 'unsubscribed':
      return value as ServerMessage;
    case 'error':
      return typeof value['code'] === 'string' && typeof value['message'] === 'string' ? (value as ServerMessage) : undefined;
    default:
      return undefined;
  }
}

export function isRunEvent(value: unknown): value is RunEvent {
  return (
    isObject(value) &&
    typeof value['seq'] === 'number' &&
    typeof value['runId'] === 'string' &&
    typeof value['type'] === 'string' &&
    typeof value['at'] === 'string' &&
    (value['stageId'] === undefined || typeof value['stageId'] === 'string') &&
    isObject(value['data'])
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
