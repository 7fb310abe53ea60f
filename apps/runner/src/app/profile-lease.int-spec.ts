import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunEvent } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import type { RunView } from '@stageflow/engine';
import { allEvents, Harness, pipelineOf, runStage, startHarness, waitFor, waitForRun } from '../testing/runner.harness';

const stage = (run: RunView, id: string) => run.stages.find((s) => s.id === id);

describe('browser-profile lease in the runner (real Redis, real worker)', () => {
  let h: Harness;
  let leases: ProfileLeases;
  let gates: string;
  beforeEach(async () => {
    // No browser-host here: the `browser:` stages run as plain commands; only the lease is under test.
    h = await startHarness({ runner: { browserSessions: false } });
    // Stands in for browser-host, which releases a run's leases when the run ends.
    leases = new ProfileLeases({ redis: h.config.redis.url, keys: h.keys });
    gates = await mkdtemp(join(tmpdir(), 'sf-lease-'));
  });
  afterEach(async () => {
    await leases.close();
    await h.close();
    await rm(gates, { recursive: true, force: true });
  });

  // `work` needs profile p and runs until the test opens its run's gate file;
  // `side` needs no profile. One active-stage slot per run: `side` can only
  // run while `work` waits if a waiting stage holds no slot.
  const pipeline = () =>
    pipelineOf(
      [
        runStage('work', `while [ ! -f "${gates}/$STAGEFLOW_RUN_ID" ]; do sleep 0.05; done`, {
          browser: { profile: 'p', headed: true, allowDomains: [] },
        }),
        runStage('side', 'echo side'),
      ],
      [],
      1,
    );
  const open = (runId: string) => writeFile(join(gates, runId), '');
  const running = (runId: string) =>
    waitFor(`run ${runId} work running`, async () => stage(await h.runs.getRun(runId), 'work')?.state === 'running');

  it('parks another run behind the holder without a slot, wakes it on release, serves waiters first come first served', async () => {
    const a = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await running(a.id);
    const b = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    const reasonB = `waiting for browser profile p held by run ${a.id}`;

    // B's side stage runs to the end while its work stage waits: the wait holds no slot.
    const parked = await waitForRun(h.runs, b.id, ['waiting']);
    expect(stage(parked, 'side')?.state).toBe('success');
    expect(stage(parked, 'work')).toMatchObject({ state: 'waiting', reason: reasonB });
    expect(parked.reason).toBe(reasonB);
    const waits = (await allEvents(h.runs, b.id))
      .filter((e) => e.type === 'stage.state' && e.stageId === 'work')
      .map((e) => (e as RunEvent<'stage.state'>).data)
      .filter((d) => d.state === 'waiting');
    expect(waits.map((d) => d.reason)).toEqual([reasonB]);

    const c = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await waitForRun(h.runs, c.id, ['waiting']);

    // A ends; browser-host releases its lease, which hands it to B (first in line), not C.
    await open(a.id);
    expect((await waitForRun(h.runs, a.id)).state).toBe('success');
    await leases.releaseRun(a.id);
    await running(b.id);
    expect(stage(await h.runs.getRun(c.id), 'work')?.state).toBe('waiting');

    await open(b.id);
    const endedB = await waitForRun(h.runs, b.id);
    expect(endedB.state).toBe('success');
    expect(stage(endedB, 'work')?.attempt).toBe(1);
    await leases.releaseRun(b.id);
    await open(c.id);
    expect((await waitForRun(h.runs, c.id)).state).toBe('success');
  });

  it('withdraws a run cancelled while it waited, so the next one is served', async () => {
    const a = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await running(a.id);
    const b = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await waitForRun(h.runs, b.id, ['waiting']);
    const c = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await waitForRun(h.runs, c.id, ['waiting']);
    expect((await h.runs.cancelRun(b.id)).state).toBe('cancelled');
    await waitFor('B withdrawn from the queue of p', async () =>
      (await leases.describe('local', 'p')).waiters.every((w) => w.runId !== b.id),
    );

    await open(a.id);
    await waitForRun(h.runs, a.id);
    await leases.releaseRun(a.id);
    await open(c.id);
    expect((await waitForRun(h.runs, c.id)).state).toBe('success');
    expect((await leases.describe('local', 'p')).waiters).toEqual([]);
  });

  it('reclaims the lease of a run that ended long ago and was never released (browser-host was down)', async () => {
    const a = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await open(a.id);
    expect((await waitForRun(h.runs, a.id)).state).toBe('success');
    // Nobody released A's lease; its end is older than browser-host's close window.
    await h.redis.hset(h.keys.run(a.id), 'endedAt', new Date(Date.now() - 3_600_000).toISOString());

    const b = await h.runs.startRun({ pipeline: pipeline(), input: {} });
    await open(b.id);
    expect((await waitForRun(h.runs, b.id)).state).toBe('success');
    const reasons = (await allEvents(h.runs, b.id))
      .filter((e) => e.type === 'stage.state' && e.stageId === 'work')
      .map((e) => (e as RunEvent<'stage.state'>).data.reason);
    expect(reasons).toContain(`waiting for browser profile p held by run ${a.id}`);
    expect((await leases.describe('local', 'p')).holder?.runId).toBe(b.id);
  });
});
