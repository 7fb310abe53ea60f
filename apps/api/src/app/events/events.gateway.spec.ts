import request from 'supertest';
import { createTestApp, wsBase, type TestApp } from '../../test/test-app';
import { GATE_ONLY } from '../../test/pipeline-sources';
import { eventsOf, WsTestClient } from '../../test/ws-client';
import { EventsService } from './events.service';

describe('WebSocket /api/ws', () => {
  let t: TestApp;
  const clients: WsTestClient[] = [];

  const connect = async (suffix = '', options = {}): Promise<WsTestClient> => {
    const client = await WsTestClient.connect(`${wsBase(t.app)}/api/ws${suffix}`, options);
    clients.push(client);
    return client;
  };
  const startRun = async (): Promise<string> =>
    (await request(t.app.getHttpServer()).post('/api/runs').send({ yaml: GATE_ONLY }).expect(201)).body.id;
  const stats = (): { sessions: number; subscriptions: number } => t.app.get(EventsService).stats();

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await t.app.close();
  });

  describe('run subscriptions', () => {
    beforeEach(async () => {
      t = await createTestApp({ listen: true, events: { blockMs: 300 } });
    });

    it('with after=0 replays the whole history in seq order, then streams new events live', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runId, after: 0 });
      const first = await ws.waitForCount(5);
      expect(first[0]).toEqual({ type: 'subscribed', run: runId, after: 0 });
      expect(eventsOf(first).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(eventsOf(first)[0]).toMatchObject({ runId, type: 'run.created' });

      t.engine.log(runId, 'approve', 'hello');
      const live = await ws.waitForCount(6);
      expect(live[5]).toMatchObject({ type: 'event', event: { seq: 5, type: 'stage.log', data: { line: 'hello' } } });
    });

    it('without after sends only events that happen after subscribing', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runId });
      expect(await ws.waitForCount(1)).toEqual([{ type: 'subscribed', run: runId, after: 4 }]);
      expect(await ws.quietFor(150)).toEqual([]);
      await request(t.app.getHttpServer()).post(`/api/runs/${runId}/stages/approve/gate`).send({ decision: 'accept' }).expect(200);
      const events = eventsOf(await ws.waitForCount(4));
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [5, 'gate.answered'],
        [6, 'stage.state'],
        [7, 'run.state'],
      ]);
    });

    it('resumes after a reconnect with the last seq: no gap, no duplicate', async () => {
      const runId = await startRun();
      const first = await connect();
      first.send({ type: 'subscribe', run: runId, after: 0 });
      t.engine.log(runId, 'approve', 'one');
      const seen = eventsOf(await first.waitForCount(6));
      await first.close();
      await waitUntil(() => t.engine.openTails === 0);

      // Events the client missed while away.
      t.engine.log(runId, 'approve', 'two');
      t.engine.log(runId, 'approve', 'three');
      const last = seen[seen.length - 1].seq;
      const second = await connect();
      second.send({ type: 'subscribe', run: runId, after: last });
      t.engine.log(runId, 'approve', 'four');
      const rest = eventsOf(await second.waitForCount(4));
      expect(await second.quietFor(150)).toEqual([]);
      const all = [...seen, ...rest].map((e) => e.seq);
      expect(all).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it('answers an unknown run with run_not_found and opens no tail', async () => {
      const ws = await connect();
      ws.send({ type: 'subscribe', run: 'run-404', after: 0 });
      ws.send({ type: 'subscribe', run: 'run-405' });
      const [a, b] = await ws.waitForCount(2);
      expect(a).toMatchObject({ type: 'error', code: 'run_not_found', run: 'run-404' });
      expect(b).toMatchObject({ type: 'error', code: 'run_not_found', run: 'run-405' });
      expect(t.engine.openTails).toBe(0);
    });

    it('unsubscribes: confirms, stops the events, closes the tail', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runId });
      await ws.waitForCount(1);
      await waitUntil(() => t.engine.openTails === 1);
      ws.send({ type: 'unsubscribe', run: runId });
      expect(await ws.waitFor((m) => m['type'] === 'unsubscribed')).toEqual({ type: 'unsubscribed', run: runId });
      await waitUntil(() => t.engine.openTails === 0);
      t.engine.log(runId, 'approve', 'unseen');
      expect(await ws.quietFor(150)).toEqual([]);
      ws.send({ type: 'unsubscribe', run: runId });
      expect(await ws.waitFor((m) => m['type'] === 'error')).toMatchObject({ code: 'not_subscribed', run: runId });
    });

    it('subscribing again to the same run replaces the subscription (one tail, resumes from the new after)', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runId, after: 0 });
      await ws.waitForCount(5);
      ws.send({ type: 'subscribe', run: runId, after: 3 });
      const again = await ws.waitForCount(7);
      expect(again.slice(5)).toEqual([{ type: 'subscribed', run: runId, after: 3 }, expect.objectContaining({ event: expect.objectContaining({ seq: 4 }) })]);
      expect(await ws.quietFor(100)).toEqual([]);
      expect(t.engine.openTails).toBe(1);
    });

    it('closes every tail of a client that disconnects', async () => {
      const runA = await startRun();
      const runB = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runA });
      ws.send({ type: 'subscribe', run: runB });
      ws.send({ type: 'subscribe', all: true });
      await ws.waitForCount(3);
      expect(stats()).toEqual({ sessions: 1, subscriptions: 3 });
      expect(t.engine.openTails).toBe(3);
      await ws.close();
      await waitUntil(() => t.engine.openTails === 0 && stats().sessions === 0);
    });
  });

  describe('all-runs subscriptions', () => {
    beforeEach(async () => {
      t = await createTestApp({ listen: true, events: { blockMs: 300 } });
    });

    it('streams events of every run with a cursor, and resumes after a cursor', async () => {
      const ws = await connect();
      ws.send({ type: 'subscribe', all: true });
      expect(await ws.waitForCount(1)).toEqual([{ type: 'subscribed', all: true, after: null }]);
      const runA = await startRun();
      const runB = await startRun();
      const got = (await ws.waitForCount(9)).slice(1);
      expect(got.every((m) => m['type'] === 'event' && typeof m['cursor'] === 'string')).toBe(true);
      expect(new Set(eventsOf(got).map((e) => e.runId))).toEqual(new Set([runA, runB]));

      const cursor = got[3]['cursor'] as string;
      const again = await connect();
      again.send({ type: 'subscribe', all: true, after: cursor });
      const rest = (await again.waitForCount(5)).slice(1);
      expect(rest).toEqual(got.slice(4));
    });
  });

  describe('message validation', () => {
    beforeEach(async () => {
      t = await createTestApp({ listen: true, events: { blockMs: 300, maxSubscriptions: 2 } });
    });

    it('answers every bad message with an error and keeps the socket usable', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send('not json');
      ws.send({ type: 'hello' });
      ws.send({ type: 'subscribe', run: runId, after: 0, extra: 1 });
      ws.send({ type: 'subscribe', run: runId, after: -5 });
      ws.socket.send(Buffer.from('{"type":"subscribe"}'), { binary: true });
      const errors = await ws.waitForCount(5);
      expect(errors.map((m) => [m['type'], m['code']])).toEqual([
        ['error', 'invalid_json'],
        ['error', 'invalid_message'],
        ['error', 'invalid_message'],
        ['error', 'invalid_message'],
        ['error', 'invalid_message'],
      ]);
      expect(String(errors[2]['message'])).toContain('"extra"');
      ws.send({ type: 'subscribe', run: runId, after: 0 });
      expect(await ws.waitFor((m) => m['type'] === 'subscribed', 3000, 5)).toEqual({ type: 'subscribed', run: runId, after: 0 });
    });

    it('closes the socket (1009) on a frame larger than the limit', async () => {
      const ws = await connect();
      ws.send({ type: 'subscribe', run: 'x'.repeat(10000) });
      expect(await ws.waitForClose()).toBe(1009);
    });

    it('limits subscriptions per connection', async () => {
      const [a, b, c] = [await startRun(), await startRun(), await startRun()];
      const ws = await connect();
      for (const run of [a, b, c]) ws.send({ type: 'subscribe', run });
      const replies = await ws.waitForCount(3);
      expect(replies[2]).toMatchObject({ type: 'error', code: 'too_many_subscriptions', run: c });
      expect(t.engine.openTails).toBe(2);
    });

    it('reports a tail failing mid-way and ends that subscription', async () => {
      const runId = await startRun();
      const ws = await connect();
      ws.send({ type: 'subscribe', run: runId });
      await ws.waitForCount(1);
      t.engine.failTails = new Error('connection lost');
      t.engine.log(runId, 'approve', 'x');
      expect(await ws.waitFor((m) => m['type'] === 'error')).toMatchObject({ code: 'subscription_failed', run: runId });
      await waitUntil(() => t.engine.openTails === 0 && stats().subscriptions === 0);
    });
  });

  describe('heartbeat', () => {
    it('drops a client that stops answering pings, closing its tails', async () => {
      t = await createTestApp({ listen: true, events: { blockMs: 300, heartbeatMs: 100 } });
      const runId = await startRun();
      const ws = await connect('', { autoPong: false });
      ws.send({ type: 'subscribe', run: runId });
      await ws.waitForCount(1);
      expect(await ws.waitForClose(2000)).toBe(1006);
      await waitUntil(() => t.engine.openTails === 0 && stats().sessions === 0);
    });

    it('keeps a client that answers', async () => {
      t = await createTestApp({ listen: true, events: { blockMs: 300, heartbeatMs: 100 } });
      const ws = await connect();
      await ws.quietFor(400);
      expect(ws.closeCode).toBeUndefined();
    });
  });

  describe('access', () => {
    const token = 'ws-token-0123456789abcdef';

    it('with a token: refuses the upgrade without it (401), accepts it as a header or ?token=', async () => {
      t = await createTestApp({ listen: true, token });
      await expect(connect()).rejects.toMatchObject({ status: 401 });
      await expect(connect('?token=wrong')).rejects.toMatchObject({ status: 401 });
      await connect('', { headers: { Authorization: `Bearer ${token}` } });
      const viaQuery = await connect(`?token=${token}`);
      viaQuery.send({ type: 'subscribe', all: true });
      expect(await viaQuery.waitForCount(1)).toEqual([{ type: 'subscribed', all: true, after: null }]);
    });

    it('without a token: refuses a page of another origin (403)', async () => {
      t = await createTestApp({ listen: true });
      await expect(connect('', { origin: 'https://evil.example' })).rejects.toMatchObject({ status: 403 });
      await connect('', { origin: `http://127.0.0.1:${new URL(wsBase(t.app)).port}` });
    });

    it('refuses other paths', async () => {
      t = await createTestApp({ listen: true });
      await expect(WsTestClient.connect(`${wsBase(t.app)}/api/other`)).rejects.toThrow();
    });
  });
});

async function waitUntil(done: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
