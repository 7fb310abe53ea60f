import request from 'supertest';
import { createTestApp, type TestApp } from '../../test/test-app';
import { GATE_ONLY, GATE_THEN_COMMAND, INVALID, WITH_WARNING } from '../../test/pipeline-sources';

describe('runs routes', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeEach(async () => {
    t = await createTestApp();
    http = request(t.app.getHttpServer());
  });
  afterEach(() => t.app.close());

  const startGateOnly = async (input?: unknown): Promise<string> =>
    (await http.post('/api/runs').send({ yaml: GATE_ONLY, ...(input === undefined ? {} : { input }) }).expect(201)).body.id;

  describe('POST /api/runs', () => {
    it('starts a run of inline YAML: 201 with the run view, input kept exactly', async () => {
      const input = { n: 1, nested: { list: [1, 'two', null], flag: false, empty: {} }, 'a.b': 'kept' };
      const res = await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND, input }).expect(201);
      expect(res.body).toMatchObject({ pipeline: 'approve-then-run', state: 'running', input, maxActiveStages: 4 });
      expect(res.body.stages).toEqual([
        expect.objectContaining({ id: 'approve', kind: 'gate', state: 'waiting', gate: { message: 'Ship it?' } }),
        expect.objectContaining({ id: 'ship', kind: 'run', state: 'pending', logTail: [] }),
      ]);
      // The snapshot's edges come along, so a client can draw the graph without the YAML.
      expect(res.body.edges).toEqual([{ from: 'approve', to: 'ship' }]);
    });

    it('starts a run of a registered pipeline by name, with input {} by default', async () => {
      await http.post('/api/pipelines').send({ yaml: GATE_ONLY }).expect(201);
      const res = await http.post('/api/runs').send({ pipeline: 'gate-only' }).expect(201);
      expect(res.body).toMatchObject({ pipeline: 'gate-only', input: {} });
    });

    it('keeps any JSON input: a string, a number, null', async () => {
      for (const input of ['text', 42, null, [1, 2]]) {
        const res = await http.post('/api/runs').send({ yaml: GATE_ONLY, input }).expect(201);
        expect(res.body.input).toEqual(input);
      }
    });

    it('asks for exactly one of pipeline and yaml', async () => {
      const none = await http.post('/api/runs').send({ input: {} }).expect(400);
      expect(none.body).toMatchObject({ code: 'invalid_request', details: [{ field: 'pipeline' }] });
      expect(none.body.message).toMatch(/send "pipeline".*or "yaml"/);
      const both = await http.post('/api/runs').send({ pipeline: 'x', yaml: GATE_ONLY }).expect(400);
      expect(both.body.message).toMatch(/only one of "pipeline" and "yaml"/);
    });

    it('answers an unknown pipeline with 404 pipeline_not_found', async () => {
      expect((await http.post('/api/runs').send({ pipeline: 'missing' }).expect(404)).body.code).toBe('pipeline_not_found');
    });

    it('refuses invalid inline YAML with 422 pipeline_invalid, and warnings when strict; starts nothing', async () => {
      expect((await http.post('/api/runs').send({ yaml: INVALID }).expect(422)).body.details.errors).toHaveLength(2);
      expect((await http.post('/api/runs').send({ yaml: WITH_WARNING, strict: true }).expect(422)).body.code).toBe('pipeline_invalid');
      expect((await http.get('/api/runs').expect(200)).body.items).toEqual([]);
    });

    it('refuses wrong types and unknown fields, naming each', async () => {
      const res = await http.post('/api/runs').send({ pipeline: 7, strict: 1, surprise: 'x' }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['pipeline', 'pipeline', 'strict', 'surprise']);
    });

    it('does not take YAML as the body (JSON only here)', async () => {
      expect((await http.post('/api/runs').set('Content-Type', 'text/yaml').send(GATE_ONLY).expect(415)).body.code).toBe(
        'unsupported_media_type',
      );
    });
  });

  describe('GET /api/runs', () => {
    it('lists newest first, filters by state and pipeline, and pages with limit and cursor', async () => {
      const a = await startGateOnly();
      const b = (await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id;
      const c = await startGateOnly();
      await http.post(`/api/runs/${c}/cancel`).expect(200);

      expect((await http.get('/api/runs').expect(200)).body.items.map((r: { id: string }) => r.id)).toEqual([c, b, a]);
      expect((await http.get('/api/runs?state=cancelled').expect(200)).body.items.map((r: { id: string }) => r.id)).toEqual([c]);
      expect((await http.get('/api/runs?pipeline=gate-only').expect(200)).body.items.map((r: { id: string }) => r.id)).toEqual([c, a]);

      const page1 = (await http.get('/api/runs?limit=2').expect(200)).body;
      expect(page1.items.map((r: { id: string }) => r.id)).toEqual([c, b]);
      expect(page1.items[0].stages).toBeUndefined();
      const page2 = (await http.get(`/api/runs?limit=2&cursor=${page1.next}`).expect(200)).body;
      expect(page2).toEqual({ items: [expect.objectContaining({ id: a })] });
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['state=sleeping', 'state'],
      ['pipeline=a/b', 'pipeline'],
      ['bogus=1', 'bogus'],
    ])('refuses ?%s with invalid_request on %s', async (query, field) => {
      const res = await http.get(`/api/runs?${query}`).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('passes the engine\'s refusal of a bad cursor through as 400', async () => {
      expect((await http.get('/api/runs?cursor=garbage').expect(400)).body.code).toBe('cursor_invalid');
    });
  });

  describe('one run', () => {
    it('GET /api/runs/:run returns the run; unknown → 404 run_not_found; malformed → 400 invalid_id', async () => {
      const id = await startGateOnly();
      expect((await http.get(`/api/runs/${id}`).expect(200)).body).toMatchObject({ id, state: 'running', stages: [{ id: 'approve' }] });
      expect((await http.get('/api/runs/run-999').expect(404)).body.code).toBe('run_not_found');
      expect((await http.get('/api/runs/bad%20id').expect(400)).body.code).toBe('invalid_id');
      expect((await http.get('/api/runs/a%2Fb').expect(400)).body.code).toBe('invalid_id');
    });

    it('GET a stage: state, reason, gate; unknown stage → 404 stage_not_found', async () => {
      const id = await startGateOnly();
      const res = await http.get(`/api/runs/${id}/stages/approve`).expect(200);
      expect(res.body).toEqual({
        runId: id,
        id: 'approve',
        kind: 'gate',
        state: 'waiting',
        reason: 'waiting for the operator',
        attempt: 1,
        maxAttempts: 1,
        logTail: [],
        gate: { message: 'Go?' },
      });
      expect((await http.get(`/api/runs/${id}/stages/nope`).expect(404)).body.code).toBe('stage_not_found');
      expect((await http.get(`/api/runs/run-404/stages/approve`).expect(404)).body.code).toBe('run_not_found');
      expect((await http.get(`/api/runs/${id}/stages/a.b`).expect(400)).body.code).toBe('invalid_id');
    });

    it('GET events pages through the history in seq order', async () => {
      const id = await startGateOnly();
      const all = (await http.get(`/api/runs/${id}/events`).expect(200)).body;
      expect(all.items.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(all.items[0]).toMatchObject({ runId: id, type: 'run.created', data: { pipeline: 'gate-only', stages: ['approve'] } });
      expect(all.last).toBe(4);
      const tail = (await http.get(`/api/runs/${id}/events?after=2&limit=1`).expect(200)).body;
      expect(tail).toEqual({ items: [expect.objectContaining({ seq: 3 })], last: 3 });
      expect((await http.get(`/api/runs/${id}/events?after=99`).expect(200)).body).toEqual({ items: [], last: 99 });
      expect((await http.get(`/api/runs/${id}/events?after=-1`).expect(400)).body.code).toBe('invalid_request');
      expect((await http.get(`/api/runs/${id}/events?limit=1001`).expect(400)).body.code).toBe('invalid_request');
      expect((await http.get('/api/runs/run-404/events').expect(404)).body.code).toBe('run_not_found');
    });
  });

  describe('cancel', () => {
    it('cancels a running run (200), and refuses a second cancel with 409 run_finished, state unchanged', async () => {
      const id = await startGateOnly();
      const res = await http.post(`/api/runs/${id}/cancel`).expect(200);
      expect(res.body).toMatchObject({ id, state: 'cancelled', stages: [{ state: 'cancelled' }] });
      const before = (await http.get(`/api/runs/${id}`).expect(200)).body;
      expect((await http.post(`/api/runs/${id}/cancel`).expect(409)).body.code).toBe('run_finished');
      expect((await http.get(`/api/runs/${id}`).expect(200)).body).toEqual(before);
    });

    it('refuses to cancel a run that succeeded', async () => {
      const id = await startGateOnly();
      t.engine.finishRun(id, 'success');
      expect((await http.post(`/api/runs/${id}/cancel`).expect(409)).body.code).toBe('run_finished');
      expect((await http.get(`/api/runs/${id}`).expect(200)).body.state).toBe('success');
    });

    it('answers an unknown run with 404', async () => {
      expect((await http.post('/api/runs/run-404/cancel').expect(404)).body.code).toBe('run_not_found');
    });
  });

  describe('gate', () => {
    it('accepts with a note: 200 with the answered stage; the run goes on', async () => {
      const id = (await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id;
      const res = await http.post(`/api/runs/${id}/stages/approve/gate`).send({ decision: 'accept', note: 'looks good' }).expect(200);
      expect(res.body).toMatchObject({ id: 'approve', state: 'success', gate: { message: 'Ship it?', answer: { decision: 'accept', note: 'looks good' } } });
    });

    it('refuses a second answer with 409 gate_not_waiting, keeping the first', async () => {
      const id = (await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id;
      await http.post(`/api/runs/${id}/stages/approve/gate`).send({ decision: 'reject' }).expect(200);
      const res = await http.post(`/api/runs/${id}/stages/approve/gate`).send({ decision: 'accept' }).expect(409);
      expect(res.body.code).toBe('gate_not_waiting');
      const stage = (await http.get(`/api/runs/${id}/stages/approve`).expect(200)).body;
      expect(stage).toMatchObject({ state: 'failed', gate: { answer: { decision: 'reject' } } });
    });

    it('refuses an answer on a finished run with 409 run_finished, and on a non-gate with 409 not_a_gate', async () => {
      const id = (await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id;
      expect((await http.post(`/api/runs/${id}/stages/ship/gate`).send({ decision: 'accept' }).expect(409)).body.code).toBe('not_a_gate');
      await http.post(`/api/runs/${id}/cancel`).expect(200);
      expect((await http.post(`/api/runs/${id}/stages/approve/gate`).send({ decision: 'accept' }).expect(409)).body.code).toBe(
        'run_finished',
      );
      expect((await http.get(`/api/runs/${id}/stages/approve`).expect(200)).body).toMatchObject({ state: 'cancelled' });
      expect((await http.get(`/api/runs/${id}/stages/approve`).expect(200)).body.gate.answer).toBeUndefined();
    });

    it.each([
      ['no decision', {}, 'decision'],
      ['an unknown decision', { decision: 'maybe' }, 'decision'],
      ['a note of 2001 characters', { decision: 'accept', note: 'x'.repeat(2001) }, 'note'],
      ['a numeric note', { decision: 'accept', note: 5 }, 'note'],
      ['an unknown field', { decision: 'accept', by: 'me' }, 'by'],
    ])('refuses %s with invalid_request on the field, leaving the gate waiting', async (_what, body, field) => {
      const id = await startGateOnly();
      const res = await http.post(`/api/runs/${id}/stages/approve/gate`).send(body).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      expect((await http.get(`/api/runs/${id}/stages/approve`).expect(200)).body.state).toBe('waiting');
    });

    it('accepts a note of exactly 2000 characters', async () => {
      const id = await startGateOnly();
      await http.post(`/api/runs/${id}/stages/approve/gate`).send({ decision: 'accept', note: 'x'.repeat(2000) }).expect(200);
    });

    it('answers unknown run and stage with 404', async () => {
      const id = await startGateOnly();
      expect((await http.post('/api/runs/run-404/stages/approve/gate').send({ decision: 'accept' }).expect(404)).body.code).toBe(
        'run_not_found',
      );
      expect((await http.post(`/api/runs/${id}/stages/nope/gate`).send({ decision: 'accept' }).expect(404)).body.code).toBe(
        'stage_not_found',
      );
    });
  });
});
