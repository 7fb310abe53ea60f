import { StageflowError } from '@stageflow/contracts';
import { testRedisUrl } from '@stageflow/testing';
import IORedis from 'ioredis';
import type Redis from 'ioredis';
import type { LeaseGrant } from './lease.types';
import { LeaseHarness, livenessExcept, track, within } from '../test/lease-harness';

const scope = 'local';
const profile = 'work';
/** Generous bound for a pub/sub wake-up on a local Redis; the lib itself never sleeps or polls. */
const WAKE_MS = 2000;

async function commandsProcessed(raw: Redis): Promise<number> {
  const stats = await raw.info('stats');
  return Number(/total_commands_processed:(\d+)/.exec(stats)?.[1]);
}

/** Resolves once `runId` is in the profile's queue (the test's own check; the lib never polls). */
function untilQueued(h: LeaseHarness, runId: string, name = profile): Promise<void> {
  return within(
    (async () => {
      while (!(await h.raw.zscore(h.keys.profileLeaseQueue(scope, name), runId))) await new Promise(setImmediate);
    })(),
    WAKE_MS,
    `${runId} queueing`,
  );
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(StageflowError);
    return (err as StageflowError).code;
  }
}

describe('ProfileLeases (real Redis)', () => {
  let h: LeaseHarness;
  beforeEach(() => {
    h = new LeaseHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  describe('grant and fencing', () => {
    it('grants a free profile and gives the holder the same grant again', async () => {
      const leases = h.leases();
      const first = await leases.acquire(scope, profile, 'run-a');
      expect(first).toEqual({ status: 'granted', grant: { scope, profile, runId: 'run-a', token: expect.any(Number) } });
      // A second stage of the same run shares the lease.
      expect(await leases.acquire(scope, profile, 'run-a')).toEqual(first);
      expect(await h.leases().acquire(scope, profile, 'run-a')).toEqual(first);
      const state = await leases.describe(scope, profile);
      expect(state.holder).toEqual({ runId: 'run-a', token: (first as { grant: LeaseGrant }).grant.token, since: expect.any(String) });
      expect(Date.parse(state.holder?.since ?? '')).toBeGreaterThan(Date.now() - 60_000);
      expect(state.waiters).toEqual([]);
    });

    it('draws a larger fencing token for every grant, also to the same run', async () => {
      const leases = h.leases();
      const tokens: number[] = [];
      for (const runId of ['run-a', 'run-b', 'run-a', 'run-c']) {
        const out = await leases.acquire(scope, profile, runId);
        if (out.status !== 'granted') throw new Error('expected a grant');
        tokens.push(out.grant.token);
        expect(await leases.release(scope, profile, runId)).toBe(true);
      }
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      expect(new Set(tokens).size).toBe(4);
    });

    it('counts a token as current only while its run holds the lease under it', async () => {
      const a = h.leases();
      const b = h.leases();
      const grantA = await a.acquire(scope, profile, 'run-a');
      if (grantA.status !== 'granted') throw new Error('expected a grant');
      const tokenA = grantA.grant.token;
      expect(await a.isCurrent(scope, profile, 'run-a', tokenA)).toBe(true);
      expect(await a.isCurrent(scope, profile, 'run-b', tokenA)).toBe(false);
      expect(await a.isCurrent(scope, profile, 'run-a', tokenA + 1)).toBe(false);

      await b.acquire(scope, profile, 'run-b');
      expect(await a.release(scope, profile, 'run-a')).toBe(true);
      // Handed over: the old token is stale, the new holder's token is current.
      expect(await a.isCurrent(scope, profile, 'run-a', tokenA)).toBe(false);
      const state = await a.describe(scope, profile);
      const tokenB = state.holder?.token ?? 0;
      expect(state.holder?.runId).toBe('run-b');
      expect(tokenB).toBeGreaterThan(tokenA);
      expect(await b.isCurrent(scope, profile, 'run-b', tokenB)).toBe(true);
      expect(await codeOf(a.assertCurrent(scope, profile, 'run-a', tokenA))).toBe('lease_not_held');

      // The same run granted again later: its first token stays stale.
      await b.release(scope, profile, 'run-b');
      const again = await a.acquire(scope, profile, 'run-a');
      if (again.status !== 'granted') throw new Error('expected a grant');
      expect(await a.isCurrent(scope, profile, 'run-a', tokenA)).toBe(false);
      expect(await a.isCurrent(scope, profile, 'run-a', again.grant.token)).toBe(true);
    });

    it('releases only for the holder', async () => {
      const leases = h.leases();
      await leases.acquire(scope, profile, 'run-a');
      await leases.acquire(scope, profile, 'run-b');
      expect(await leases.release(scope, profile, 'run-b')).toBe(false);
      expect(await leases.release(scope, profile, 'run-c')).toBe(false);
      expect((await leases.describe(scope, profile)).holder?.runId).toBe('run-a');
      expect(await leases.release(scope, profile, 'run-a')).toBe(true);
      expect(await leases.release(scope, profile, 'run-a')).toBe(false);
    });

    it('keeps profiles and scopes apart', async () => {
      const leases = h.leases();
      expect((await leases.acquire(scope, 'work', 'run-a')).status).toBe('granted');
      expect((await leases.acquire(scope, 'personal', 'run-b')).status).toBe('granted');
      expect((await leases.acquire('team-1', 'work', 'run-c')).status).toBe('granted');
    });

    it('refuses malformed input before touching Redis', async () => {
      const leases = h.leases();
      expect(await codeOf(leases.acquire(scope, '../work', 'run-a'))).toBe('invalid_profile_name');
      expect(await codeOf(leases.acquire('a:b', profile, 'run-a'))).toBe('invalid_scope');
      expect(await codeOf(leases.release(scope, profile, 'run a'))).toBe('invalid_run_id');
      expect(await codeOf(leases.isCurrent(scope, profile, 'run-a', 0))).toBe('invalid_lease_token');
      expect(await h.raw.keys(`${h.prefix}*`)).toEqual([]);
    });
  });

  describe('queue', () => {
    it('queues runs in arrival order, names the holder, and hands over first come first served', async () => {
      const leases = h.leases();
      await leases.acquire(scope, profile, 'run-a');
      const b = await leases.acquire(scope, profile, 'run-b');
      const c = await leases.acquire(scope, profile, 'run-c');
      const d = await leases.acquire(scope, profile, 'run-d');
      expect([b, c, d].map((o) => o.status === 'queued' && [o.position, o.holder.runId])).toEqual([
        [1, 'run-a'],
        [2, 'run-a'],
        [3, 'run-a'],
      ]);
      // Asking again keeps the place (one entry per run).
      const cAgain = await leases.acquire(scope, profile, 'run-c');
      expect(cAgain).toEqual(c);

      const state = await leases.describe(scope, profile);
      expect(state.holder?.runId).toBe('run-a');
      expect(state.waiters.map((w) => w.runId)).toEqual(['run-b', 'run-c', 'run-d']);
      const heldSince = Date.parse(state.holder?.since ?? '');
      expect(state.waiters.every((w) => Date.parse(w.since) >= heldSince)).toBe(true);

      const served: string[] = [];
      for (const runId of ['run-a', 'run-b', 'run-c', 'run-d']) {
        const holder = (await leases.describe(scope, profile)).holder?.runId ?? 'nobody';
        served.push(holder);
        expect(holder).toBe(runId);
        expect(await leases.release(scope, profile, holder)).toBe(true);
      }
      expect(served).toEqual(['run-a', 'run-b', 'run-c', 'run-d']);
      expect(await leases.describe(scope, profile)).toEqual({ scope, profile, waiters: [] });
      // Nothing left behind once the lease is free and nobody waits.
      expect((await h.raw.keys(`${h.prefix}*`)).sort()).toEqual([h.keys.leaseFence()]);
    });

    it('serves the queue before a newcomer even if the lease was freed behind its back', async () => {
      const leases = h.leases();
      await leases.acquire(scope, profile, 'run-a');
      await leases.acquire(scope, profile, 'run-b');
      await leases.acquire(scope, profile, 'run-c');
      // A state the scripts never leave: free lease with waiters (e.g. the key deleted by hand).
      await h.raw.del(h.keys.profileLease(scope, profile));
      const newcomer = await leases.acquire(scope, profile, 'run-e');
      expect(newcomer).toMatchObject({ status: 'queued', position: 2, holder: { runId: 'run-b' } });
      const state = await leases.describe(scope, profile);
      expect(state.holder?.runId).toBe('run-b');
      expect(state.waiters.map((w) => w.runId)).toEqual(['run-c', 'run-e']);
    });

    it('withdraws a waiting run and leaves the holder alone', async () => {
      const leases = h.leases();
      await leases.acquire(scope, profile, 'run-a');
      await leases.acquire(scope, profile, 'run-b');
      await leases.acquire(scope, profile, 'run-c');
      expect(await leases.withdraw(scope, profile, 'run-b')).toBe(true);
      expect(await leases.withdraw(scope, profile, 'run-b')).toBe(false);
      expect(await leases.withdraw(scope, profile, 'run-a')).toBe(false);
      expect((await leases.describe(scope, profile)).waiters.map((w) => w.runId)).toEqual(['run-c']);
      await leases.release(scope, profile, 'run-a');
      expect((await leases.describe(scope, profile)).holder?.runId).toBe('run-c');
    });

    it('lets go of everything a run has at teardown', async () => {
      const leases = h.leases();
      await leases.acquire(scope, 'work', 'run-a');
      await leases.acquire(scope, 'personal', 'run-b');
      await leases.acquire(scope, 'personal', 'run-a');
      await leases.acquire(scope, 'work', 'run-c');
      const changes = await leases.releaseRun('run-a');
      expect(changes.sort((x, y) => x.profile.localeCompare(y.profile))).toEqual([
        { scope, profile: 'personal', released: false, withdrawn: true },
        { scope, profile: 'work', released: true, withdrawn: false },
      ]);
      expect((await leases.describe(scope, 'work')).holder?.runId).toBe('run-c');
      expect((await leases.describe(scope, 'personal')).waiters).toEqual([]);
      expect(await leases.releaseRun('run-a')).toEqual([]);
    });
  });

  describe('waking waiters', () => {
    it('wakes a waiting run through the release, not by polling', async () => {
      const holder = h.leases();
      const waiter = h.leases();
      await holder.acquire(scope, profile, 'run-a');
      const wait = track(waiter.waitForGrant(scope, profile, 'run-b'));
      // Wait until run-b is queued (so the grant can only come from the release).
      await untilQueued(h, 'run-b');
      // While it waits, nothing talks to Redis: no polling loop. (The pause is the test's, not the lib's.)
      const before = await commandsProcessed(h.raw);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await commandsProcessed(h.raw)) - before).toBeLessThanOrEqual(2);
      expect(wait.settled()).toBe(false);
      await holder.release(scope, profile, 'run-a');
      const grant = await within(wait.promise, WAKE_MS, 'the wake-up');
      expect(grant).toEqual({ scope, profile, runId: 'run-b', token: expect.any(Number) });
      expect(await waiter.isCurrent(scope, profile, 'run-b', grant.token)).toBe(true);
    });

    it('resolves at once when the run already holds or the lease is free', async () => {
      const leases = h.leases();
      const first = await leases.waitForGrant(scope, profile, 'run-a');
      expect(await leases.waitForGrant(scope, profile, 'run-a')).toEqual(first);
    });

    it('wakes every stage of the same run that waits', async () => {
      const holder = h.leases();
      const waiter = h.leases();
      await holder.acquire(scope, profile, 'run-a');
      const stages = [1, 2, 3].map(() => waiter.waitForGrant(scope, profile, 'run-b'));
      await untilQueued(h, 'run-b');
      await holder.acquire(scope, profile, 'run-c');
      await holder.release(scope, profile, 'run-a');
      const grants = await within(Promise.all(stages), WAKE_MS, 'the wake-up');
      expect(new Set(grants.map((g) => g.token)).size).toBe(1);
      expect(grants[0].runId).toBe('run-b');
      // run-c queued after run-b's stages: still waiting behind it.
      expect((await holder.describe(scope, profile)).waiters.map((w) => w.runId)).toEqual(['run-c']);
    });

    it('tells onGranted listeners about a handoff (the engine parks the stage meanwhile)', async () => {
      const engine = h.leases();
      const host = h.leases();
      const heard: LeaseGrant[] = [];
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const stop = await engine.onGranted((grant) => {
        heard.push(grant);
        if (grant.runId === 'run-b') wake();
      });
      await host.acquire(scope, profile, 'run-a');
      const queued = await engine.acquire(scope, profile, 'run-b');
      expect(queued.status).toBe('queued');
      await host.release(scope, profile, 'run-a');
      await within(woken, WAKE_MS, 'the grant event');
      expect(heard.map((g) => g.runId)).toEqual(['run-a', 'run-b']);
      // After stop() the listener hears nothing more; a second listener proves the grant was published.
      stop();
      let heardZ!: () => void;
      const zHeard = new Promise<void>((resolve) => (heardZ = resolve));
      await engine.onGranted((grant) => grant.runId === 'run-z' && heardZ());
      await host.release(scope, profile, 'run-b');
      await host.acquire(scope, profile, 'run-z');
      await within(zHeard, WAKE_MS, 'the run-z grant');
      expect(heard.map((g) => g.runId)).toEqual(['run-a', 'run-b']);
    });

    it('does not lose a grant made before the listener subscribed', async () => {
      const engine = h.leases();
      const host = h.leases();
      await host.acquire(scope, profile, 'run-a');
      await engine.acquire(scope, profile, 'run-b');
      // Handed over while nobody in the engine listened.
      await host.release(scope, profile, 'run-a');
      const heard: LeaseGrant[] = [];
      await engine.onGranted((grant) => heard.push(grant));
      expect(heard).toEqual([{ scope, profile, runId: 'run-b', token: expect.any(Number) }]);
    });

    it('still wakes a run whose grant was published while its subscriber was reconnecting', async () => {
      const clients: Redis[] = [];
      const holder = h.leases();
      const waiter = h.leases(undefined, () => {
        const client = new IORedis(testRedisUrl());
        clients.push(client);
        return client;
      });
      await holder.acquire(scope, profile, 'run-a');
      const wait = track(waiter.waitForGrant(scope, profile, 'run-b'));
      await untilQueued(h, 'run-b');
      const [, subscriber] = clients;
      const id = await subscriber.client('ID');
      const down = new Promise((resolve) => subscriber.once('close', resolve));
      await h.raw.client('KILL', 'ID', String(id));
      await down;
      // Published while the subscriber is down: only the re-check after reconnecting can deliver it.
      await holder.release(scope, profile, 'run-a');
      expect(wait.settled()).toBe(false);
      expect((await within(wait.promise, WAKE_MS, 'the wake-up after reconnect')).runId).toBe('run-b');
    });

    it('ignores malformed messages on the lease channel', async () => {
      const holder = h.leases();
      const waiter = h.leases();
      await holder.acquire(scope, profile, 'run-a');
      const wait = waiter.waitForGrant(scope, profile, 'run-b');
      await untilQueued(h, 'run-b');
      await h.raw.publish(h.keys.leaseChannel(), '{"type":"granted","runId":"run-b"}');
      await h.raw.publish(h.keys.leaseChannel(), 'not json');
      await holder.release(scope, profile, 'run-a');
      expect((await within(wait, WAKE_MS, 'the wake-up')).runId).toBe('run-b');
    });

    it('stops waiting on abort but keeps the run queued until withdrawn', async () => {
      const holder = h.leases();
      const waiter = h.leases();
      await holder.acquire(scope, profile, 'run-a');
      const controller = new AbortController();
      const wait = waiter.waitForGrant(scope, profile, 'run-b', controller.signal);
      await untilQueued(h, 'run-b');
      controller.abort(new Error('stage cancelled'));
      expect(await codeOf(wait)).toBe('lease_wait_aborted');
      expect((await holder.describe(scope, profile)).waiters.map((w) => w.runId)).toEqual(['run-b']);
      expect(await codeOf(waiter.waitForGrant(scope, profile, 'run-b', controller.signal))).toBe('lease_wait_aborted');
      expect(await waiter.withdraw(scope, profile, 'run-b')).toBe(true);
    });

    it('rejects pending waits with leases_closed on close, and refuses calls after', async () => {
      const holder = h.leases();
      const waiter = h.leases();
      await holder.acquire(scope, profile, 'run-a');
      const wait = waiter.waitForGrant(scope, profile, 'run-b');
      await untilQueued(h, 'run-b');
      const code = codeOf(wait);
      await waiter.close();
      expect(await code).toBe('leases_closed');
      expect(await codeOf(waiter.acquire(scope, profile, 'run-b'))).toBe('leases_closed');
      await waiter.close();
    });
  });

  describe('reclaim', () => {
    it('lets a waiter reclaim the lease of a dead holder when it starts waiting', async () => {
      const dead = new Set(['run-a']);
      const holder = h.leases();
      const grantA = await holder.acquire(scope, profile, 'run-a');
      if (grantA.status !== 'granted') throw new Error('expected a grant');
      const waiter = h.leases(livenessExcept(dead));
      const grantB = await within(waiter.waitForGrant(scope, profile, 'run-b'), WAKE_MS, 'the reclaim');
      expect(grantB.token).toBeGreaterThan(grantA.grant.token);
      // The dead run's late release (or a retry of its stage) cannot take it back.
      expect(await holder.isCurrent(scope, profile, 'run-a', grantA.grant.token)).toBe(false);
      expect(await holder.release(scope, profile, 'run-a')).toBe(false);
      expect((await holder.describe(scope, profile)).holder?.runId).toBe('run-b');
    });

    it('reclaims again when the lease is handed to a run that died while waiting', async () => {
      const dead = new Set<string>();
      const host = h.leases();
      await host.acquire(scope, profile, 'run-a');
      await host.acquire(scope, profile, 'run-b');
      const waiter = h.leases(livenessExcept(dead));
      const wait = waiter.waitForGrant(scope, profile, 'run-c');
      await untilQueued(h, 'run-c');
      dead.add('run-b');
      // The release hands over to run-b (dead); run-c hears the change, checks, and reclaims.
      await host.release(scope, profile, 'run-a');
      expect((await within(wait, WAKE_MS, 'the reclaim')).runId).toBe('run-c');
    });

    it('reclaims for a run parked by the engine (acquire + onGranted), without waitForGrant', async () => {
      const dead = new Set(['run-a']);
      const host = h.leases();
      await host.acquire(scope, profile, 'run-a');
      const engine = h.leases(livenessExcept(dead));
      let granted!: (grant: LeaseGrant) => void;
      const heard = new Promise<LeaseGrant>((resolve) => (granted = resolve));
      await engine.onGranted((grant) => grant.runId === 'run-b' && granted(grant));
      expect((await engine.acquire(scope, profile, 'run-b')).status).toBe('queued');
      expect((await within(heard, WAKE_MS, 'the reclaim')).runId).toBe('run-b');
    });

    it('skips dead waiters and hands over to the first live one', async () => {
      const leases = h.leases();
      for (const runId of ['run-a', 'run-b', 'run-c', 'run-d']) await leases.acquire(scope, profile, runId);
      const outcome = await leases.reclaim(scope, profile, livenessExcept(new Set(['run-a', 'run-b'])));
      expect(outcome).toMatchObject({
        releasedHolder: { runId: 'run-a' },
        removedWaiters: ['run-b'],
        holder: { runId: 'run-c' },
      });
      expect((await leases.describe(scope, profile)).waiters.map((w) => w.runId)).toEqual(['run-d']);
    });

    it('removes dead waiters even while the holder is alive', async () => {
      const leases = h.leases();
      for (const runId of ['run-a', 'run-b', 'run-c']) await leases.acquire(scope, profile, runId);
      const outcome = await leases.reclaim(scope, profile, livenessExcept(new Set(['run-b'])));
      expect(outcome).toMatchObject({ removedWaiters: ['run-b'], holder: { runId: 'run-a' } });
      expect(outcome.releasedHolder).toBeUndefined();
    });

    it('loses cleanly to the holder releasing at the same moment', async () => {
      const leases = h.leases();
      await leases.acquire(scope, profile, 'run-a');
      await leases.acquire(scope, profile, 'run-b');
      // run-a ends and releases while the reclaim is deciding that run-a is dead.
      const outcome = await leases.reclaim(scope, profile, async (runId) => {
        if (runId === 'run-a') {
          await leases.release(scope, profile, 'run-a');
          return false;
        }
        return true;
      });
      expect(outcome.releasedHolder).toBeUndefined();
      const state = await leases.describe(scope, profile);
      expect(state.holder?.runId).toBe('run-b');
      expect(outcome.holder).toEqual(state.holder);
    });

    it('reclaims every lease of dead runs at host start and leaves live ones alone', async () => {
      const leases = h.leases();
      await leases.acquire(scope, 'work', 'run-a');
      await leases.acquire(scope, 'work', 'run-b');
      await leases.acquire(scope, 'work', 'run-c');
      await leases.acquire(scope, 'personal', 'run-d');
      await leases.acquire('team-1', 'shop', 'run-e');
      await leases.acquire('team-1', 'shop', 'run-f');
      const dead = new Set(['run-a', 'run-b', 'run-e', 'run-f']);
      const outcomes = await leases.reclaimAll(livenessExcept(dead));
      expect(outcomes.sort((x, y) => x.profile.localeCompare(y.profile))).toEqual([
        { scope: 'team-1', profile: 'shop', releasedHolder: { runId: 'run-e', token: expect.any(Number) }, removedWaiters: ['run-f'] },
        expect.objectContaining({ scope, profile: 'work', releasedHolder: expect.objectContaining({ runId: 'run-a' }), removedWaiters: ['run-b'], holder: expect.objectContaining({ runId: 'run-c' }) }),
      ]);
      expect((await leases.describe(scope, 'personal')).holder?.runId).toBe('run-d');
      expect(await leases.describe('team-1', 'shop')).toEqual({ scope: 'team-1', profile: 'shop', waiters: [] });
      expect(await h.raw.smembers(h.keys.leaseIndex())).toEqual(expect.arrayContaining(['local/work', 'local/personal']));
      expect(await h.raw.smembers(h.keys.leaseIndex())).not.toContain('team-1/shop');
    });

    it('reports which leases could not be reclaimed after trying all', async () => {
      const leases = h.leases();
      await leases.acquire(scope, 'work', 'run-a');
      await leases.acquire(scope, 'personal', 'run-b');
      const err = await leases
        .reclaimAll(async (runId) => {
          if (runId === 'run-a') throw new Error('run store unreachable');
          return false;
        })
        .catch((e: StageflowError) => e);
      expect(err).toBeInstanceOf(StageflowError);
      expect((err as StageflowError).code).toBe('lease_reclaim_failed');
      expect((err as StageflowError).message).toContain('local/work: run store unreachable');
      expect((await leases.describe(scope, 'personal')).holder).toBeUndefined();
      expect((await leases.describe(scope, 'work')).holder?.runId).toBe('run-a');
    });
  });
});
