import type { LeaseHolder } from './lease.types';
import type { ProfileLeases } from './profile-leases.service';
import { LeaseHarness } from '../test/lease-harness';

const scope = 'local';
const profile = 'work';
const ROUNDS = 50;

/** One run's turn with the profile, as the actors saw it. */
interface Turn {
  runId: string;
  token: number;
  /** Present when the run had to queue. */
  ticket?: number;
  /** Who the run was told it waits for. */
  waitedFor?: LeaseHolder;
}

/** Shared by the actors: the critical section they must never be in together. */
interface Bench {
  inside: number;
  maxInside: number;
  turns: Turn[];
}

function pause(): Promise<void> {
  return new Promise((resolve) => (Math.random() < 0.5 ? setImmediate(resolve) : setTimeout(resolve, 1)));
}

/**
 * A browser-using "process": each round is a new run that takes the profile,
 * works in the critical section, and releases it at the end of the run.
 */
async function actor(name: string, leases: ProfileLeases, bench: Bench): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const runId = `${name}-${round}`;
    const outcome = await leases.acquire(scope, profile, runId);
    let turn: Omit<Turn, 'token'> = { runId };
    if (outcome.status === 'queued') {
      turn = { runId, ticket: outcome.ticket, waitedFor: outcome.holder };
      // What GET /api/profiles/:name shows meanwhile: a holder, and this run among the waiters.
      const seen = await leases.describe(scope, profile);
      if (seen.waiters.some((w) => w.runId === runId)) {
        expect(seen.holder?.token).toBeGreaterThanOrEqual(outcome.holder.token);
      }
    }
    const grant = outcome.status === 'granted' ? outcome.grant : await leases.waitForGrant(scope, profile, runId);

    bench.inside++;
    bench.maxInside = Math.max(bench.maxInside, bench.inside);
    bench.turns.push({ ...turn, token: grant.token });
    expect(await leases.isCurrent(scope, profile, runId, grant.token)).toBe(true);
    await pause();
    bench.inside--;

    expect(await leases.release(scope, profile, runId)).toBe(true);
    await pause();
  }
}

async function contend(actors: number): Promise<Bench> {
  const h = new LeaseHarness();
  try {
    const bench: Bench = { inside: 0, maxInside: 0, turns: [] };
    await Promise.all(Array.from({ length: actors }, (_, i) => actor(`actor${i}`, h.leases(), bench)));
    expect(await h.leases().describe(scope, profile)).toEqual({ scope, profile, waiters: [] });
    return bench;
  } finally {
    await h.dispose();
  }
}

function checkTurns(bench: Bench, actors: number): void {
  const { turns } = bench;
  // Never two holders at once, and the critical section was entered in token order.
  expect(bench.maxInside).toBe(1);
  expect(turns).toHaveLength(actors * ROUNDS);
  expect(new Set(turns.map((t) => t.runId)).size).toBe(actors * ROUNDS);
  for (let i = 1; i < turns.length; i++) expect(turns[i].token).toBeGreaterThan(turns[i - 1].token);

  // Tickets and tokens come from one counter, so "who was waiting when this grant
  // was made" is exact: runs that queued before it (ticket < token) and were served after it.
  for (const served of turns) {
    const waiting = turns.filter((w) => w.ticket !== undefined && w.ticket < served.token && w.token > served.token);
    if (served.ticket === undefined) {
      // A direct grant: nobody may have been waiting (no newcomer overtakes the queue).
      expect({ runId: served.runId, waiting: waiting.map((w) => w.runId) }).toEqual({ runId: served.runId, waiting: [] });
    } else {
      // A handoff: it went to the earliest arrival among those waiting.
      for (const w of waiting) expect(w.ticket).toBeGreaterThan(served.ticket);
    }
  }

  // Every waiter was told the run that really held the profile when it queued.
  for (const w of turns) {
    const ticket = w.ticket;
    if (ticket === undefined) continue;
    const holderThen = [...turns].reverse().find((t) => t.token < ticket);
    expect({ runId: w.runId, waitedFor: w.waitedFor?.runId, token: w.waitedFor?.token }).toEqual({
      runId: w.runId,
      waitedFor: holderThen?.runId,
      token: holderThen?.token,
    });
  }
}

describe('lease contention (real Redis, one profile)', () => {
  it.each([2, 4])('%i runs at a time over 50 rounds: one holder, served in arrival order', async (actors) => {
    const bench = await contend(actors);
    checkTurns(bench, actors);
    // The test is only worth something if runs really queued and were handed the lease.
    const queued = bench.turns.filter((t) => t.ticket !== undefined).length;
    expect(queued).toBeGreaterThan(ROUNDS / 2);
  });
});
