import { randomBytes } from 'node:crypto';
import type { RedisKeys, RunEventData, RunEventType } from '@stageflow/contracts';

/** A condition on one hash field: `in`/`nin` a list of values, `set` (the field exists) or `unset` (it does not). */
export type FieldCheck =
  | { field: string; in: readonly string[] }
  | { field: string; nin: readonly string[] }
  | { field: string; set: true }
  | { field: string; unset: true };

export interface HashChange {
  /** All must pass. A required change that fails aborts the commit; a soft one is just not applied. */
  expect?: readonly FieldCheck[];
  soft?: boolean;
  /** Fields to write; `undefined` deletes the field. */
  set?: Readonly<Record<string, string | number | undefined>>;
}

/** Handle of an op, used to tie an event to a soft change. */
export type OpRef = number;

interface LuaHashOp {
  t: 'h';
  k: number;
  c?: string[][];
  soft?: boolean;
  s: string[];
  d: string[];
}
type LuaOp = LuaHashOp | { t: 'sadd' | 'srem'; k: number; m: string } | { t: 'zadd'; k: number; score: string; m: string };

/**
 * A set of writes to one run that land atomically with their events (see
 * COMMIT_LUA). Built by the engine's services, applied by `RunStore.commit`.
 * Required changes to the same hash coalesce (the first one's checks, later
 * fields win), so a stage can go pending → ready → queued in one commit.
 */
export class Commit {
  readonly id = randomBytes(8).toString('hex');
  private readonly keys: string[];
  private readonly ops: LuaOp[] = [];
  private readonly required = new Map<string, number>();
  private readonly events: { j: string; op?: number }[] = [];
  private marker?: number;
  private unlock?: { k: number; token: string };

  constructor(
    keys: RedisKeys,
    readonly runId: string,
    readonly at: string,
    private readonly allEventsMaxLen: number,
  ) {
    this.keys = [keys.runEventSeq(runId), keys.runEvents(runId), keys.allEvents()];
  }

  /** Changes a hash; returns the op for tying events to a soft change. */
  hash(key: string, change: HashChange): OpRef {
    const sets: string[] = [];
    const dels: string[] = [];
    for (const [field, value] of Object.entries(change.set ?? {})) {
      if (value === undefined) dels.push(field);
      else sets.push(field, String(value));
    }
    const existing = change.soft ? undefined : this.required.get(key);
    if (existing !== undefined) {
      const op = this.ops[existing] as LuaHashOp;
      mergeFields(op, sets, dels);
      return existing + 1;
    }
    const op: LuaHashOp = { t: 'h', k: this.keyIndex(key), s: sets, d: dels };
    if (change.expect?.length) op.c = change.expect.map(encodeCheck);
    if (change.soft) op.soft = true;
    this.ops.push(op);
    if (!change.soft) this.required.set(key, this.ops.length - 1);
    return this.ops.length;
  }

  sadd(key: string, member: string): void {
    this.ops.push({ t: 'sadd', k: this.keyIndex(key), m: member });
  }
  srem(key: string, member: string): void {
    this.ops.push({ t: 'srem', k: this.keyIndex(key), m: member });
  }
  zadd(key: string, score: number, member: string): void {
    this.ops.push({ t: 'zadd', k: this.keyIndex(key), score: String(score), m: member });
  }

  /** Appends an event (seq assigned in Redis). With `onlyIf`, only when that soft op applied. */
  event<T extends RunEventType>(type: T, data: RunEventData[T], stageId?: string, onlyIf?: OpRef): void {
    const body = JSON.stringify({ runId: this.runId, stageId, type, at: this.at, data });
    this.events.push({ j: body.slice(1), op: onlyIf });
  }

  /** The hash that remembers this commit's id, so a resent commit is recognised (see COMMIT_LUA). */
  markOn(key: string): void {
    this.marker = this.keyIndex(key);
  }

  /** Releases a mutex (compare-and-delete) when the commit applies. */
  releaseLock(key: string, token: string): void {
    this.unlock = { k: this.keyIndex(key), token };
  }

  get isEmpty(): boolean {
    return this.ops.length === 0 && this.events.length === 0;
  }

  get eventCount(): number {
    return this.events.length;
  }

  /** Arguments for `sfCommit`: number of keys, keys, then the JSON. */
  toArgs(): [number, ...string[]] {
    const payload = {
      id: this.id,
      mk: this.marker,
      ul: this.unlock?.k,
      ut: this.unlock?.token,
      ops: this.ops,
      ev: this.events,
      cap: this.allEventsMaxLen,
    };
    return [this.keys.length, ...this.keys, JSON.stringify(payload)];
  }

  private keyIndex(key: string): number {
    const found = this.keys.indexOf(key);
    if (found >= 0) return found + 1;
    this.keys.push(key);
    return this.keys.length;
  }
}

function encodeCheck(check: FieldCheck): string[] {
  if ('in' in check) return [check.field, 'in', ...check.in];
  if ('nin' in check) return [check.field, 'nin', ...check.nin];
  if ('unset' in check) return [check.field, 'unset'];
  return [check.field, 'set'];
}

function mergeFields(op: LuaHashOp, sets: string[], dels: string[]): void {
  const fields = new Map<string, string | undefined>();
  for (let i = 0; i < op.s.length; i += 2) fields.set(op.s[i], op.s[i + 1]);
  for (const d of op.d) fields.set(d, undefined);
  for (let i = 0; i < sets.length; i += 2) fields.set(sets[i], sets[i + 1]);
  for (const d of dels) fields.set(d, undefined);
  op.s = [];
  op.d = [];
  for (const [field, value] of fields) {
    if (value === undefined) op.d.push(field);
    else op.s.push(field, value);
  }
}

/** What Redis answered to a commit. */
export type CommitResult =
  | { status: 'applied'; lastSeq: number; soft: boolean[] }
  /** The commit had landed before (resent after a reconnect). */
  | { status: 'replayed' }
  /** A required check failed; nothing was written. `op` is the 1-based op. */
  | { status: 'conflict'; op: number };

export function parseCommitReply(reply: unknown): CommitResult {
  const r = reply as [number, number?, number[]?];
  if (r[0] === 2) return { status: 'replayed' };
  if (r[0] === 0) return { status: 'conflict', op: Number(r[1]) };
  return { status: 'applied', lastSeq: Number(r[1]), soft: (r[2] ?? []).map((v) => v === 1) };
}
