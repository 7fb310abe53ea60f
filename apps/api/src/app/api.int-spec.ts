import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { createServer } from 'node:net';
import request from 'supertest';
import { testConfig, wsBase } from '../test/test-app';
import { eventsOf, WsTestClient } from '../test/ws-client';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';

/** Two gates in a row: every step of the run is driven through the api, no runner needed. */
const TWO_GATES = `name: two-gates
stages:
  - id: approve
    kind: gate
    message: Approve?
  - id: confirm
    kind: gate
    message: Confirm?
edges:
  - from: approve
    to: confirm
`;

async function boot(config: ApiConfig): Promise<NestExpressApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
  configureApp(app, config);
  await app.listen(0, '127.0.0.1');
  return app;
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`condition not reached: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('api on the real engine and Redis', () => {
  const prefix = uniquePrefix('sft-api');
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  const clients: WsTestClient[] = [];

  const connect = async (): Promise<WsTestClient> => {
    const client = await WsTestClient.connect(`${wsBase(app)}/api/ws`);
    clients.push(client);
    return client;
  };
  const startRun = async (): Promise<string> => {
    const res = await http.post('/api/runs').send({ pipeline: 'two-gates', input: { ticket: 7 } }).expect(201);
    await waitUntil(
      () => http.get(`/api/runs/${res.body.id}/stages/approve`).then((r) => r.body.state as string),
      (state) => state === 'waiting',
    );
    return res.body.id;
  };
  const history = async (runId: string): Promise<{ seq: number; type: string }[]> =>
    (await http.get(`/api/runs/${runId}/events?limit=1000`).expect(200)).body.items;

  beforeAll(async () => {
    app = await boot({ ...testConfig(), redis: { url: testRedisUrl(), prefix } });
    http = request(app.getHttpServer());
    await http.post('/api/pipelines').set('Content-Type', 'text/yaml').send(TWO_GATES).expect(201);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await app.close();
    await deleteKeys(testRedisUrl(), prefix);
  });

  it('is healthy', async () => {
    await http.get('/api/health').expect(200, { status: 'ok' });
  });

  it('registers, lists and reads pipelines; refuses invalid YAML with 422', async () => {
    expect((await http.get('/api/pipelines').expect(200)).body).toEqual([expect.objectContaining({ name: 'two-gates', stages: 2 })]);
    expect((await http.get('/api/pipelines/two-gates').expect(200)).body.source).toBe(TWO_GATES);
    expect((await http.post('/api/pipelines').send({ yaml: 'name: x\nstages: 3\n' }).expect(422)).body.code).toBe('pipeline_invalid');
    expect((await http.get('/api/pipelines/nope').expect(404)).body.code).toBe('pipeline_not_found');
  });

  it('starts a run over HTTP; WS after=0 replays the history in seq order, then streams; a resubscribe with after=N gets exactly the rest', async () => {
    const runId = await startRun();
    const run = (await http.get(`/api/runs/${runId}`).expect(200)).body;
    expect(run).toMatchObject({ id: runId, pipeline: 'two-gates', input: { ticket: 7 } });

    const before = await history(runId);
    expect(before.map((e) => e.seq)).toEqual(before.map((_, i) => i + 1));

    const first = await connect();
    first.send({ type: 'subscribe', run: runId, after: 0 });
    const replay = await first.waitForCount(1 + before.length);
    expect(replay[0]).toEqual({ type: 'subscribed', run: runId, after: 0 });
    expect(eventsOf(replay.slice(1))).toEqual(before);

    // Live: answering the first gate opens the second.
    await http.post(`/api/runs/${runId}/stages/approve/gate`).send({ decision: 'accept', note: 'ok' }).expect(200);
    const afterApprove = await waitUntil(
      () => history(runId),
      (h) => h.some((e) => e.type === 'gate.opened' && (e as { stageId?: string }).stageId === 'confirm'),
    );
    const live = await first.waitForCount(1 + afterApprove.length);
    expect(eventsOf(live.slice(1))).toEqual(afterApprove);
    const lastSeen = afterApprove[afterApprove.length - 1].seq;
    await first.close();

    // While away: the second gate is answered and the run ends.
    await http.post(`/api/runs/${runId}/stages/confirm/gate`).send({ decision: 'accept' }).expect(200);
    const final = await waitUntil(
      () => http.get(`/api/runs/${runId}`).then((r) => r.body),
      (r) => r.state === 'success',
    );
    expect(final.stages.map((s: { state: string }) => s.state)).toEqual(['success', 'success']);

    const everything = await history(runId);
    const second = await connect();
    second.send({ type: 'subscribe', run: runId, after: lastSeen });
    const rest = await second.waitForCount(1 + everything.length - lastSeen);
    expect(rest[0]).toEqual({ type: 'subscribed', run: runId, after: lastSeen });
    expect(eventsOf(rest.slice(1))).toEqual(everything.slice(lastSeen));
    expect(await second.quietFor(300)).toEqual([]);
  });

  it('streams all runs with cursors, from "only new"', async () => {
    const ws = await connect();
    ws.send({ type: 'subscribe', all: true });
    await ws.waitForCount(1);
    const runId = await startRun();
    const mine = await ws.waitFor((m) => m['type'] === 'event' && (m['event'] as { runId: string }).runId === runId);
    expect(mine['cursor']).toMatch(/^\d+-\d+$/);
    expect((mine['event'] as { seq: number }).seq).toBe(1);
  });

  it('answers 409 on a second gate answer, a cancel of a finished run and a gate of a cancelled run, changing nothing', async () => {
    const runId = await startRun();
    await http.post(`/api/runs/${runId}/stages/approve/gate`).send({ decision: 'reject', note: 'no' }).expect(200);
    const rejected = await waitUntil(
      () => http.get(`/api/runs/${runId}`).then((r) => r.body),
      (r) => r.state === 'failed',
    );
    const eventsBefore = await history(runId);

    const again = await http.post(`/api/runs/${runId}/stages/approve/gate`).send({ decision: 'accept' }).expect(409);
    expect(['gate_not_waiting', 'run_finished']).toContain(again.body.code);
    expect((await http.post(`/api/runs/${runId}/cancel`).expect(409)).body.code).toBe('run_finished');

    expect((await http.get(`/api/runs/${runId}`).expect(200)).body).toEqual(rejected);
    expect(await history(runId)).toEqual(eventsBefore);
    expect((await http.get(`/api/runs/${runId}/stages/approve`).expect(200)).body.gate.answer).toMatchObject({ decision: 'reject', note: 'no' });

    const other = await startRun();
    const cancelled = (await http.post(`/api/runs/${other}/cancel`).expect(200)).body;
    expect(cancelled.state).toBe('cancelled');
    expect((await http.post(`/api/runs/${other}/stages/approve/gate`).send({ decision: 'accept' }).expect(409)).body.code).toBe('run_finished');
    expect((await http.get(`/api/runs/${other}`).expect(200)).body).toEqual(cancelled);
  });

  it('answers unknown runs and stages with 404 and lists runs by state', async () => {
    expect((await http.get('/api/runs/nope-123').expect(404)).body.code).toBe('run_not_found');
    const runId = await startRun();
    expect((await http.get(`/api/runs/${runId}/stages/nope`).expect(404)).body.code).toBe('stage_not_found');
    const waiting = (await http.get('/api/runs?state=waiting&pipeline=two-gates&limit=100').expect(200)).body.items;
    expect(waiting.map((r: { id: string }) => r.id)).toContain(runId);
    expect((await http.get('/api/runs?cursor=garbage').expect(400)).body.code).toBe('cursor_invalid');
  });

  it('reports 503 from health while Redis is unreachable', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const down = await boot({ ...testConfig(), redis: { url: `redis://127.0.0.1:${port}`, prefix } });
    try {
      expect((await request(down.getHttpServer()).get('/api/health').expect(503)).body.code).toBe('redis_unavailable');
    } finally {
      await down.close();
    }
  });
});
