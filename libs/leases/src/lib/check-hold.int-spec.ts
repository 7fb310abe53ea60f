import type { LeaseGrant } from './lease.types';
import { LeaseHarness, within } from '../test/lease-harness';

/**
 * Profile checks hold a lease under an id the engine does not know. A reclaim
 * whose liveness comes from the engine (which calls every unknown id dead)
 * must leave a check alone until its deadline, and free the profile after.
 */
const scope = 'local';
const profile = 'work';
const engineKnowsNoRun = async () => false;

describe('ProfileLeases.holdForCheck (real Redis)', () => {
  let h: LeaseHarness;
  beforeEach(() => {
    h = new LeaseHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('takes a free profile, refuses (never queues) while a run holds it, and hands on at release', async () => {
    const leases = h.leases();
    await leases.acquire(scope, profile, 'run-a');
    const busy = await leases.holdForCheck(scope, profile, 60_000);
    expect(busy).toEqual({ status: 'busy', holder: { runId: 'run-a', token: expect.any(Number), since: expect.any(String) } });
    expect((await leases.describe(scope, profile)).waiters).toEqual([]);
    await leases.release(scope, profile, 'run-a');

    const held = await leases.holdForCheck(scope, profile, 60_000);
    if (held.status !== 'granted') throw new Error('expected the check to hold the free profile');
    expect(held.grant.runId).toMatch(/^check_/);
    expect(await leases.isCurrent(scope, profile, held.grant.runId, held.grant.token)).toBe(true);
    // A run arriving meanwhile waits behind the check, as behind a run.
    expect(await leases.acquire(scope, profile, 'run-b')).toMatchObject({ status: 'queued', holder: { runId: held.grant.runId } });
    expect(await leases.release(scope, profile, held.grant.runId)).toBe(true);
    expect((await leases.describe(scope, profile)).holder?.runId).toBe('run-b');
  });

  it('is not reclaimed as a dead run before its deadline, and is after it', async () => {
    const leases = h.leases();
    const held = await leases.holdForCheck(scope, profile, 60_000);
    if (held.status !== 'granted') throw new Error('expected a grant');
    expect((await leases.reclaimAll(engineKnowsNoRun)).map((o) => o.releasedHolder)).toEqual([undefined]);
    expect((await leases.describe(scope, profile)).holder?.runId).toBe(held.grant.runId);

    // A check whose process died: its deadline passes and the next reclaim frees the profile.
    const short = await leases.holdForCheck(scope, 'other', 200);
    if (short.status !== 'granted') throw new Error('expected a grant');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const outcome = await leases.reclaim(scope, 'other', engineKnowsNoRun);
    expect(outcome.releasedHolder?.runId).toBe(short.grant.runId);
    expect((await leases.describe(scope, 'other')).holder).toBeUndefined();
  });

  it('takes the profile back from a check that died past its deadline when the next check comes', async () => {
    const leases = h.leases();
    const crashed = await leases.holdForCheck(scope, profile, 200);
    if (crashed.status !== 'granted') throw new Error('expected a grant');
    expect((await leases.holdForCheck(scope, profile, 60_000)).status).toBe('busy');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const next = await leases.holdForCheck(scope, profile, 60_000);
    expect(next).toMatchObject({ status: 'granted' });
    expect((await leases.describe(scope, profile)).holder?.runId).not.toBe(crashed.grant.runId);
  });

  it('wakes a run waiting behind a check that never released, at the check deadline', async () => {
    const crashed = h.leases();
    const held = await crashed.holdForCheck(scope, profile, 800);
    if (held.status !== 'granted') throw new Error('expected a grant');
    // The waiter's liveness is the engine's: run-b is alive, the check id unknown.
    const waiter = h.leases(async (runId) => runId === 'run-b');
    const grant: LeaseGrant = await within(waiter.waitForGrant(scope, profile, 'run-b'), 5_000, 'the reclaim at the check deadline');
    expect(grant.runId).toBe('run-b');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(held.expiresAt));
  });
});
