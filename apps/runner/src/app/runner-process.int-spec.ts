import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RunEvent } from '@stageflow/contracts';
import {
  allEvents,
  freePort,
  getJson,
  Harness,
  isAlive,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';
import { exited, spawnRunner } from '../testing/processes.harness';

describe('a runner process killed with SIGKILL mid-stage', () => {
  let h: Harness;
  const runners: ChildProcess[] = [];
  beforeEach(async () => {
    h = await startHarness({ worker: false });
  });
  afterEach(async () => {
    for (const runner of runners) if (runner.exitCode === null) runner.kill('SIGKILL');
    await h.close();
  });

  it('has its attempt recorded as lost and retried by another runner within 15 s; the orphaned group is killed', async () => {
    const [port1, port2] = [await freePort(), await freePort()];
    const first = spawnRunner(h, port1);
    runners.push(first);
    await waitFor('runner 1 to be healthy', async () => (await getJson(port1, '/health')).status === 200, 30000);
    expect(await getJson(port1, '/health')).toEqual({ status: 200, body: { status: 'ok' } });

    const command = `if [ "$STAGEFLOW_ATTEMPT" = 1 ]; then sleep 300 & echo $! > grandchild.pid; wait; fi; printf '{"attempt": %s}' "$STAGEFLOW_ATTEMPT" > "$STAGEFLOW_OUTPUT"`;
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('victim', command, { retries: 1 })], []), input: {} });
    const pidFile = join(h.config.workDir, run.id, 'victim', 'grandchild.pid');
    const grandchild = await waitFor('attempt 1 to start its grandchild', async () => Number(await readFile(pidFile, 'utf8')) || undefined);

    first.kill('SIGKILL');
    await exited(first);
    const killedAt = Date.now();
    const logLines: string[] = [];
    const second = spawnRunner(h, port2, { logs: logLines });
    runners.push(second);

    await waitFor(
      'attempt 1 to be taken back',
      async () => {
        const stage = await h.runs.getStage(run.id, 'victim');
        return !(stage.state === 'running' && stage.attempt === 1);
      },
      20000,
    );
    expect(Date.now() - killedAt).toBeLessThanOrEqual(15000);

    const done = await waitForRun(h.runs, run.id, 'ended', 20000);
    expect(done.state).toBe('success');
    expect(done.stages[0]).toMatchObject({ state: 'success', attempt: 2, envelope: { output: { attempt: 2 } } });
    const states = (await allEvents(h.runs, run.id))
      .filter((e): e is RunEvent<'stage.state'> => e.type === 'stage.state')
      .map((e) => e.data);
    expect(states).toContainEqual({ state: 'queued', attempt: 2, reason: 'runner lost while running attempt 1; retrying, attempt 2 of 2' });
    expect(states.filter((d) => d.state === 'success')).toHaveLength(1);
    await waitFor('the lost attempt’s grandchild to be killed', async () => !isAlive(grandchild), 3000);

    // SIGTERM: Nest runs the shutdown hooks (worker closed, health server
    // closed, connections quit), then re-raises the signal.
    expect(await getJson(port2, '/health')).toEqual({ status: 200, body: { status: 'ok' } });
    const stoppingAt = Date.now();
    second.kill('SIGTERM');
    expect(await exited(second)).toEqual({ code: null, signal: 'SIGTERM' });
    expect(Date.now() - stoppingAt).toBeLessThan(10000);
    expect((await getJson(port2, '/health')).status).toBe(0);

    // 'exit' can come before the last lines of its stdout were read.
    await waitFor('the runner\'s shutdown line on its stdout', async () => logLines.some((line) => line.includes('"stopped taking stage jobs"')), 5000);
    // JSON lines; the stage work it logged carries the run and stage ids.
    const logged = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.find((l) => l['msg'] === 'runner lost while running attempt 1')).toMatchObject({
      service: 'runner',
      runId: run.id,
      stageId: 'victim',
    });
    expect(logged.find((l) => l['msg'] === 'stage process started')).toMatchObject({ runId: run.id, stageId: 'victim', attempt: 2 });
    expect(logged.some((l) => l['msg'] === 'stopped taking stage jobs')).toBe(true);
  });
});
