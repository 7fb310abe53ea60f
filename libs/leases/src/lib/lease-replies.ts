import { ContractViolationError } from '@stageflow/contracts';
import type { AcquireOutcome, CheckHoldOutcome, LeaseHolder, LeaseState, LeaseWaiter } from './lease.types';
import { isoFromMs } from './lease-rules';

/**
 * Readers for the scripts' replies and the describe transaction. A reply of
 * the wrong shape means the scripts and this code disagree (or someone wrote
 * the keys by hand): fail loudly instead of guessing.
 */

function bad(what: string, reply: unknown): never {
  throw new ContractViolationError(`lease ${what} reply`, [`unexpected ${JSON.stringify(reply)}`]);
}

function int(v: unknown, what: string, reply: unknown): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) bad(what, reply);
  return n;
}

function str(v: unknown, what: string, reply: unknown): string {
  if (typeof v !== 'string' || v === '') bad(what, reply);
  return v;
}

export function readAcquireReply(reply: unknown, scope: string, profile: string, runId: string): AcquireOutcome {
  if (!Array.isArray(reply)) bad('acquire', reply);
  if (reply[0] === 'granted' && reply.length === 3) {
    return { status: 'granted', grant: { scope, profile, runId, token: int(reply[1], 'acquire', reply) } };
  }
  if (reply[0] === 'queued' && reply.length === 7) {
    return {
      status: 'queued',
      position: int(reply[1], 'acquire', reply),
      ticket: int(reply[2], 'acquire', reply),
      holder: {
        runId: str(reply[3], 'acquire', reply),
        token: int(reply[4], 'acquire', reply),
        since: isoFromMs(int(reply[5], 'acquire', reply)),
      },
      since: isoFromMs(int(reply[6], 'acquire', reply)),
    };
  }
  return bad('acquire', reply);
}

export function readHoldForCheckReply(reply: unknown, scope: string, profile: string, holderId: string, expiresAt: number): CheckHoldOutcome {
  if (!Array.isArray(reply)) bad('holdForCheck', reply);
  if (reply[0] === 'granted' && reply.length === 3) {
    return {
      status: 'granted',
      grant: { scope, profile, runId: holderId, token: int(reply[1], 'holdForCheck', reply) },
      expiresAt: isoFromMs(expiresAt),
    };
  }
  if (reply[0] === 'busy' && reply.length === 4) {
    return {
      status: 'busy',
      holder: {
        runId: str(reply[1], 'holdForCheck', reply),
        token: int(reply[2], 'holdForCheck', reply),
        since: isoFromMs(int(reply[3], 'holdForCheck', reply)),
      },
    };
  }
  return bad('holdForCheck', reply);
}

export interface ReleaseReply {
  released: boolean;
  next?: LeaseHolder;
}

export function readReleaseReply(reply: unknown): ReleaseReply {
  if (!Array.isArray(reply)) bad('release', reply);
  if (reply.length === 1 && (reply[0] === 0 || reply[0] === 1)) return { released: reply[0] === 1 };
  if (reply.length === 4 && reply[0] === 1) {
    return {
      released: true,
      next: {
        runId: str(reply[1], 'release', reply),
        token: int(reply[2], 'release', reply),
        since: isoFromMs(int(reply[3], 'release', reply)),
      },
    };
  }
  return bad('release', reply);
}

export interface ReclaimReply {
  released: boolean;
  holder?: LeaseHolder;
  removed: string[];
}

export function readReclaimReply(reply: unknown): ReclaimReply {
  if (!Array.isArray(reply) || reply.length < 4 || (reply[0] !== 0 && reply[0] !== 1)) bad('reclaim', reply);
  const removed = reply.slice(4).map((r) => str(r, 'reclaim', reply));
  if (reply[1] === '') return { released: reply[0] === 1, removed };
  return {
    released: reply[0] === 1,
    holder: {
      runId: str(reply[1], 'reclaim', reply),
      token: int(reply[2], 'reclaim', reply),
      since: isoFromMs(int(reply[3], 'reclaim', reply)),
    },
    removed,
  };
}

/** Flattens `[[member, score], …]` (RESP3 mapping) to `[member, score, …]` (RESP2 / ioredis "legacy"). */
function flatPairs(v: unknown, raw: unknown): string[] {
  if (!Array.isArray(v)) bad('describe', raw);
  const flat = v.flatMap((item) => (Array.isArray(item) ? item : [item]));
  if (flat.length % 2 !== 0) bad('describe', raw);
  return flat.map((x) => String(x));
}

/** Reads a hash reply: an object (ioredis' HGETALL) or a flat `[field, value, …]` array. */
function hashOf(v: unknown, raw: unknown): Record<string, string> {
  if (Array.isArray(v)) {
    const flat = flatPairs(v, raw);
    const out: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
    return out;
  }
  if (typeof v !== 'object' || v === null) bad('describe', raw);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)]));
}

/**
 * Builds the state from one MULTI: HMGET of the lease (runId, token, since),
 * ZRANGE WITHSCORES of the queue, HGETALL of the since hash.
 */
export function readState(scope: string, profile: string, leaseReply: unknown, queueReply: unknown, sinceReply: unknown): LeaseState {
  const raw = { leaseReply, queueReply, sinceReply };
  if (!Array.isArray(leaseReply) || leaseReply.length !== 3) bad('describe', raw);
  const queue = flatPairs(queueReply, raw);
  const sinceByRun = hashOf(sinceReply, raw);
  const state: LeaseState = { scope, profile, waiters: [] };
  const [runId, token, since] = leaseReply as unknown[];
  if (runId !== null && runId !== undefined) {
    state.holder = {
      runId: str(runId, 'describe', raw),
      token: int(token, 'describe', raw),
      since: isoFromMs(int(since, 'describe', raw)),
    };
  }
  for (let i = 0; i < queue.length; i += 2) {
    const waiter: LeaseWaiter = {
      runId: queue[i],
      ticket: int(queue[i + 1], 'describe', raw),
      // The since field is written in the same script as the queue entry; 0 only if edited by hand.
      since: isoFromMs(sinceByRun[queue[i]] ? int(sinceByRun[queue[i]], 'describe', raw) : 0),
    };
    state.waiters.push(waiter);
  }
  return state;
}
