import Redis from 'ioredis';
import { GenericContainer, StartedTestContainer, Wait } from 'testcontainers';
import { RunEvent } from '@stageflow/contracts';
import { HealthServer } from './health/health.server';
import {
  allEvents,
  freePort,
  getJson,
  Harness,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';

describe('Redis restarted during a run', () => {
  let container: StartedTestContainer;
  let h: Harness;

  beforeAll(async () => {
    // A Redis of this test's own, on a fixed host port so the restart keeps the address.
    const port = await freePort();
    container = await new GenericContainer('redis:7-bookworm')
      .withCommand(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'])
      .withExposedPorts({ container: 6379, host: port })
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    h = await startHarness({ redisUrl: `redis://127.0.0.1:${port}`, runner: { health: true } });
  });

  afterAll(async () => {
    await h?.close();
    await container?.stop({ timeout: 2000 });
  });

  it('reconnects, finishes the run, and records no stage twice', async () => {
    const step = (id: string) => runStage(id, `sleep 1; printf '{"%s": true}' "$STAGEFLOW_STAGE_ID" > "$STAGEFLOW_OUTPUT"`);
    const run = await h.runs.startRun({
      pipeline: pipelineOf([step('a'), step('b'), step('c'), step('d')], [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'd' },
      ]),
      input: {},
    });
    await waitFor('stage b to run', async () => (await h.runs.getStage(run.id, 'b')).state === 'running');
    await container.restart();

    const done = await waitForRun(h.runs, run.id, 'ended', 60000);
    expect(done.state).toBe('success');
    expect(done.stages.map((s) => s.envelope?.output)).toEqual([{ a: true }, { b: true }, { c: true }, { d: true }]);

    const events = await allEvents(h.runs, run.id);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const successes = events
      .filter((e) => e.type === 'stage.state' && (e as RunEvent<'stage.state'>).data.state === 'success')
      .map((e) => e.stageId);
    expect(successes).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reports unhealthy while Redis does not answer, healthy again after', async () => {
    const port = h.app.get(HealthServer).port as number;
    expect(await getJson(port, '/health')).toEqual({ status: 200, body: { status: 'ok' } });
    const admin = new Redis(h.config.redis.url);
    try {
      await admin.call('CLIENT', 'PAUSE', '2500', 'ALL');
      expect(await getJson(port, '/health')).toEqual({ status: 503, body: { status: 'unavailable' } });
      await waitFor('health to recover', async () => (await getJson(port, '/health')).status === 200, 10000);
    } finally {
      admin.disconnect();
    }
  });
});
