import { ID_PATTERN } from '../core/parse-id.pipe';

/** Largest frame a client may send; ws closes the socket (1009) on a bigger one. */
export const MAX_CLIENT_MESSAGE_BYTES = 4 * 1024;

/** An opaque all-runs cursor as handed out by the engine (stream ids look like `1712345678901-0`). */
const CURSOR_PATTERN = /^[A-Za-z0-9:._-]{1,128}$/;

export type SubscriptionTarget = { kind: 'run'; runId: string } | { kind: 'all' };

export type ClientMessage =
  | { type: 'subscribe'; target: { kind: 'run'; runId: string }; after?: number }
  | { type: 'subscribe'; target: { kind: 'all' }; after?: string }
  | { type: 'unsubscribe'; target: SubscriptionTarget };

/** A client message we refuse; sent back as `{type:"error", code, message}` and the socket stays open. */
export class WsProtocolError extends Error {
  constructor(
    readonly code: 'invalid_json' | 'invalid_message',
    message: string,
  ) {
    super(message);
  }
}

const ALLOWED_KEYS: Record<ClientMessage['type'], readonly string[]> = {
  subscribe: ['type', 'run', 'all', 'after'],
  unsubscribe: ['type', 'run', 'all'],
};

/**
 * Parses and checks one frame from a client: a JSON object with a known `type`,
 * no unknown fields, exactly one of `run` / `all: true`, and an `after` of the
 * right kind. Throws {@link WsProtocolError}; never anything else.
 */
export function parseClientMessage(data: string): ClientMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(data);
  } catch {
    throw new WsProtocolError('invalid_json', 'Messages are JSON objects, e.g. {"type":"subscribe","run":"<run id>","after":0}.');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalid('a message must be a JSON object with a "type"');
  }
  const msg = raw as Record<string, unknown>;
  const type = msg['type'];
  if (type !== 'subscribe' && type !== 'unsubscribe') {
    throw invalid('"type" must be "subscribe" or "unsubscribe"');
  }
  const unknown = Object.keys(msg).filter((k) => !ALLOWED_KEYS[type].includes(k));
  if (unknown.length) {
    throw invalid(`unknown field ${unknown.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')} in a "${type}" message`);
  }
  const target = readTarget(msg);
  if (type === 'unsubscribe') return { type, target };

  const after = msg['after'];
  if (target.kind === 'run') {
    if (after !== undefined && !(typeof after === 'number' && Number.isSafeInteger(after) && after >= 0)) {
      throw invalid('"after" of a run subscription is the last event seq you have: an integer ≥ 0 (0 replays the whole history)');
    }
    return { type, target, after: after as number | undefined };
  }
  if (after !== undefined && !(typeof after === 'string' && CURSOR_PATTERN.test(after))) {
    throw invalid('"after" of an all-runs subscription is a "cursor" string from an earlier event ("0" = oldest kept)');
  }
  return { type, target, after: after as string | undefined };
}

function readTarget(msg: Record<string, unknown>): SubscriptionTarget {
  const run = msg['run'];
  const all = msg['all'];
  if (run !== undefined && all !== undefined) throw invalid('send either "run" or "all": true, not both');
  if (all !== undefined) {
    if (all !== true) throw invalid('"all" can only be true');
    return { kind: 'all' };
  }
  if (run === undefined) throw invalid('name what to (un)subscribe: "run": "<run id>" or "all": true');
  if (typeof run !== 'string' || !ID_PATTERN.test(run)) {
    throw invalid('"run" must be a run id: 1 to 128 letters, digits, "_" or "-"');
  }
  return { kind: 'run', runId: run };
}

function invalid(problem: string): WsProtocolError {
  return new WsProtocolError('invalid_message', `Invalid message: ${problem}.`);
}

/** Key of a subscription within one connection. */
export function subscriptionKey(target: SubscriptionTarget): string {
  return target.kind === 'all' ? 'all' : `run:${target.runId}`;
}
