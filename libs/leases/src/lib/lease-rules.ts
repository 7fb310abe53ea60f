import { ContractViolationError } from '@stageflow/contracts';
import type { GrantVia, LeaseGrantedEvent, LeaseHolder, LeaseState } from './lease.types';
import { assertProfileRef, assertRunId } from './lease-input';

/**
 * The lease rules that need no Redis: what a reclaim removes, what a waiting
 * stage says, how channel messages are read, and which grants a process has
 * already announced. The Lua scripts apply the rest atomically.
 */

/** Runs whose liveness a reclaim must know: the holder, then the waiters in queue order. */
export function runsToCheck(state: LeaseState): string[] {
  const ids = state.holder ? [state.holder.runId] : [];
  for (const w of state.waiters) if (!ids.includes(w.runId)) ids.push(w.runId);
  return ids;
}

export interface ReclaimPlan {
  /** Release this holder (compare-and-release on run id and token). */
  deadHolder?: { runId: string; token: number };
  /** Take these runs out of the queue. */
  deadWaiters: string[];
}

/**
 * Decides what a reclaim removes. A run whose liveness is unknown counts as
 * alive: reclaim only ever takes a lease from a run known to be dead.
 */
export function planReclaim(state: LeaseState, alive: ReadonlyMap<string, boolean>): ReclaimPlan {
  const dead = (runId: string) => alive.get(runId) === false;
  return {
    deadHolder: state.holder && dead(state.holder.runId) ? { runId: state.holder.runId, token: state.holder.token } : undefined,
    deadWaiters: state.waiters.filter((w) => dead(w.runId)).map((w) => w.runId),
  };
}

/** True when the plan changes nothing. */
export function isEmptyPlan(plan: ReclaimPlan): boolean {
  return !plan.deadHolder && plan.deadWaiters.length === 0;
}

/** The line a waiting stage shows, e.g. "waiting for browser profile work held by run r-42". */
export function waitingReason(profile: string, holder?: Pick<LeaseHolder, 'runId'>): string {
  return holder
    ? `waiting for browser profile ${profile} held by run ${holder.runId}`
    : `waiting for browser profile ${profile}`;
}

/** Member of the lease index for a profile; `/` cannot occur in either name. */
export function indexMember(scope: string, profile: string): string {
  return `${scope}/${profile}`;
}

/** Reads an index member back; undefined for anything that is not a valid `scope/profile`. */
export function parseIndexMember(member: string): { scope: string; profile: string } | undefined {
  const parts = member.split('/');
  if (parts.length !== 2) return undefined;
  try {
    assertProfileRef(parts[0], parts[1]);
  } catch {
    return undefined;
  }
  return { scope: parts[0], profile: parts[1] };
}

/** Redis-clock milliseconds as the ISO 8601 string records use. */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

const VIAS: readonly GrantVia[] = ['acquire', 'handoff', 'reclaim'];

function positiveInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

/**
 * Validates a message from the lease channel where it enters the process.
 * Throws {@link ContractViolationError}.
 */
export function parseLeaseEvent(raw: string): LeaseGrantedEvent {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ContractViolationError('lease event', ['not JSON']);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ContractViolationError('lease event', ['expected an object']);
  }
  const r = value as Record<string, unknown>;
  const problems: string[] = [];
  if (r['type'] !== 'granted') problems.push('type must be "granted"');
  for (const field of ['scope', 'profile', 'runId'] as const) {
    if (typeof r[field] !== 'string') problems.push(`${field} must be a string`);
  }
  if (!problems.length) {
    try {
      assertProfileRef(r['scope'], r['profile']);
      assertRunId(r['runId']);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (!positiveInt(r['token'])) problems.push('token must be a positive integer');
  if (!positiveInt(r['since'])) problems.push('since must be a positive integer');
  if (!VIAS.includes(r['via'] as GrantVia)) problems.push(`via must be one of ${VIAS.join(', ')}`);
  if (problems.length) throw new ContractViolationError('lease event', problems);
  return {
    type: 'granted',
    grant: { scope: r['scope'] as string, profile: r['profile'] as string, runId: r['runId'] as string, token: r['token'] as number },
    via: r['via'] as GrantVia,
    since: r['since'] as number,
  };
}

/**
 * The newest grant this process has seen per profile. A grant can reach the
 * process twice (the channel, and the re-check after (re)subscribing); tokens
 * only grow, so anything not newer than what was seen is a repeat or stale.
 */
export class GrantLedger {
  private readonly newest = new Map<string, { runId: string; token: number }>();

  /** Records a grant; true when it is newer than any seen for its profile. */
  record(scope: string, profile: string, runId: string, token: number): boolean {
    const key = indexMember(scope, profile);
    const seen = this.newest.get(key);
    if (seen && seen.token >= token) return false;
    this.newest.set(key, { runId, token });
    return true;
  }

  /** True when `runId` was granted the profile after it drew `ticket` (its queued reply is older than its grant). */
  grantedSince(scope: string, profile: string, runId: string, ticket: number): boolean {
    const seen = this.newest.get(indexMember(scope, profile));
    return !!seen && seen.runId === runId && seen.token > ticket;
  }
}
