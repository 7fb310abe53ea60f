import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { RunEvent, StageJobPayload, stageJobId } from '@stageflow/contracts';
import {
  allEvents,
  Harness,
  isAlive,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';

const stageStates = (events: RunEvent[], stageId: string) =>
  events
    .filter((e): e is RunEvent<'stage.state'> => e.type === 'stage.state' && e.stageId === stageId)
    .map((e) => e.data);

/** A stage that starts a grandchild `sleep` in its process group, writes its pid, and waits. */
const SPAWNS_GRANDCHILD = 'sleep 300 & echo $! > grandchild.pid; wait';

async function grandchildPid(h: Harness, runId: string, stageId: string): Promise<number> {
  const file = join(h.config.workDir, runId, stageId, 'grandchild.pid');
  return waitFor(`${file}`, async () => Number((await readFile(file, 'utf8')).trim()) || undefined);
}

describe('stages that fail, time out or are cancelled', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('times out: SIGTERM then SIGKILL to the whole process group, grandchild included', async () => {
    // The shell ignores SIGTERM (and so does its sleep, which inherits that), so only the SIGKILL escalation stops them.
    const run = await h.runs.startRun({
      pipeline: pipelineOf([runStage('slow', `trap '' TERM; ${SPAWNS_GRANDCHILD}`, { timeoutSeconds: 1 })], []),
      input: {},
    });
    const pid = await grandchildPid(h, run.id, 'slow');
    expect(isAlive(pid)).toBe(true);
    const done = await waitForRun(h.runs, run.id);
    expect(done.stages[0]).toMatchObject({ state: 'timed_out', reason: 'timed out after 1 s' });
    expect(done).toMatchObject({ state: 'failed', reason: 'stage "slow" timed out: timed out after 1 s' });
    await waitFor('the grandchild to be killed', async () => !isAlive(pid), 3000);
  });

  it('cancels: the run and its stages end as cancelled and the process group is killed', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf([runStage('long', SPAWNS_GRANDCHILD), runStage('after', 'true')], [{ from: 'long', to: 'after' }]),
      input: {},
    });
    const pid = await grandchildPid(h, run.id, 'long');
    const cancelled = await h.runs.cancelRun(run.id);
    expect(cancelled).toMatchObject({ state: 'cancelled', reason: 'cancelled by an operator' });
    expect(cancelled.stages.map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
    await waitFor('the grandchild to be killed', async () => !isAlive(pid), 3000);
    // The runner's own end of the attempt is not recorded over the cancel.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = await allEvents(h.runs, run.id);
    expect(stageStates(events, 'long').map((d) => d.state)).toEqual(['ready', 'queued', 'running', 'cancelled']);
    await expect(h.runs.cancelRun(run.id)).rejects.toMatchObject({ code: 'run_finished' });
  });

  it('retries a failing stage and says which attempt comes next', async () => {
    const flaky = `if [ "$STAGEFLOW_ATTEMPT" -lt 3 ]; then echo "attempt $STAGEFLOW_ATTEMPT fails" >&2; exit 4; fi; echo '{"third": true}' > "$STAGEFLOW_OUTPUT"`;
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('flaky', flaky, { retries: 2 })], []), input: {} });
    const done = await waitForRun(h.runs, run.id);
    expect(done.state).toBe('success');
    expect(done.stages[0]).toMatchObject({ state: 'success', attempt: 3, maxAttempts: 3, envelope: { output: { third: true } } });
    const states = stageStates(await allEvents(h.runs, run.id), 'flaky');
    expect(states.filter((d) => d.state === 'queued').map((d) => d.reason)).toEqual([
      undefined,
      'exited with code 4; retrying, attempt 2 of 3',
      'exited with code 4; retrying, attempt 3 of 3',
    ]);
    expect(states.filter((d) => d.state === 'running').map((d) => d.attempt)).toEqual([1, 2, 3]);
  });

  it('fails the stage and the run when the retries are used up', async () => {
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('broken', 'exit 4', { retries: 1 })], []), input: {} });
    const done = await waitForRun(h.runs, run.id);
    expect(done.stages[0]).toMatchObject({ state: 'failed', attempt: 2, reason: 'exited with code 4' });
    expect(done).toMatchObject({ state: 'failed', reason: 'stage "broken" failed: exited with code 4' });
  });
});

describe('a stage job delivered more than once', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const fakeJob = (payload: StageJobPayload) => ({ id: stageJobId(payload), data: payload }) as Job<StageJobPayload>;

  it('is dropped when it comes again after the stage succeeded', async () => {
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('once', 'echo ran')], []), input: {} });
    await waitForRun(h.runs, run.id);
    const before = await allEvents(h.runs, run.id);
    const payload = { runId: run.id, stageId: 'once', attempt: 1 };
    await h.queue.queue.remove(stageJobId(payload));
    await h.queue.add([payload]);
    await waitFor('the replayed job to be processed', async () => (await h.queue.queue.getJobState(stageJobId(payload))) === 'completed');
    expect(await allEvents(h.runs, run.id)).toEqual(before);
    expect(stageStates(before, 'once').filter((d) => d.state === 'success')).toHaveLength(1);
  });

  it('records one success when a second delivery arrives while the first is running', async () => {
    const run = await h.runs.startRun({
      pipeline: pipelineOf([runStage('twice', `sleep 1; echo '{"done": true}' > "$STAGEFLOW_OUTPUT"`, { retries: 1 })], []),
      input: {},
    });
    await waitFor('attempt 1 to run', async () => (await h.runs.getStage(run.id, 'twice')).state === 'running');
    // What BullMQ does after a lost lock: the same job again, to another processor.
    await h.worker?.process(fakeJob({ runId: run.id, stageId: 'twice', attempt: 1 }));
    const done = await waitForRun(h.runs, run.id);
    expect(done.state).toBe('success');
    const states = stageStates(await allEvents(h.runs, run.id), 'twice');
    expect(states.filter((d) => d.state === 'success')).toEqual([{ state: 'success', attempt: 2 }]);
    expect(states.find((d) => d.state === 'queued' && d.attempt === 2)?.reason).toBe(
      'runner lost while running attempt 1; retrying, attempt 2 of 2',
    );
  });
});

describe('abandoned runs', () => {
  let h: Harness;
  beforeEach(async () => {
    // The engine without a worker: stage jobs stay in the queue.
    h = await startHarness({ worker: false });
  });
  afterEach(async () => {
    await h.close();
  });

  it('leaves a run alone while its queued stage has a job, and abandons it once the job is gone on two checks', async () => {
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('orphan', 'true'), runStage('next', 'true')], [{ from: 'orphan', to: 'next' }]), input: {} });
    expect(run.stages[0].state).toBe('queued');
    expect((await h.sweeper.sweepOnce())?.abandoned).toEqual([]);
    expect((await h.sweeper.sweepOnce())?.abandoned).toEqual([]);

    await h.queue.queue.remove(stageJobId({ runId: run.id, stageId: 'orphan', attempt: 1 }));
    expect((await h.sweeper.sweepOnce())?.abandoned).toEqual([]);
    const report = await h.sweeper.sweepOnce();
    const reason =
      'stage "orphan" is queued (attempt 1) but its job is gone from the stage queue (2 checks in a row); no runner will pick it up';
    expect(report?.abandoned).toEqual([{ runId: run.id, reason }]);

    const after = await h.runs.getRun(run.id);
    expect(after).toMatchObject({ state: 'abandoned', reason });
    expect(after.stages.map((s) => s.state)).toEqual(['cancelled', 'cancelled']);
    expect(await h.redis.sismember(h.keys.activeRuns(), run.id)).toBe(0);
  });

  it('lets one sweeper act at a time', async () => {
    const token = await h.redis.set(h.keys.abandonSweepLock(), 'someone-else', 'PX', 5000, 'NX');
    expect(token).toBe('OK');
    expect(await h.sweeper.sweepOnce()).toBeUndefined();
  });
});
