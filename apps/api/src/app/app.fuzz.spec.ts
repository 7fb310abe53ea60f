import fc from 'fast-check';
import request from 'supertest';
import { createTestApp, type TestApp } from '../test/test-app';
import { GATE_ONLY, GATE_THEN_COMMAND, INVALID } from '../test/pipeline-sources';

/**
 * Random requests to every route (and beside them): whatever arrives, the api
 * answers 2xx-4xx with an error body that has a code, and never a 5xx.
 */
describe('api under random requests', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    t = await createTestApp({ bodyLimitBytes: 2048 });
    http = request(t.app.getHttpServer());
    await http.post('/api/pipelines').send({ yaml: GATE_ONLY }).expect(201);
    await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201);
    await http.post('/api/runs').send({ pipeline: 'gate-only' }).expect(201);
  });
  afterAll(() => t.app.close());

  const segment = fc.oneof(
    fc.constantFrom('run-1', 'run-2', 'approve', 'ship', 'gate-only', 'schema', 'validate', 'cancel', 'gate', 'stages', 'events', 'profiles', 'audit', 'work'),
    fc.string({ maxLength: 12 }).map(encodeURIComponent),
    fc.constantFrom('..', '%FF', '%E0%A4%A', '%2F', '%00', 'a.b', '-', '_', 'x'.repeat(129), '%20'),
  );
  const path = fc.oneof(
    fc.constantFrom(
      '/api/pipelines',
      '/api/pipelines/validate',
      '/api/pipelines/schema',
      '/api/runs',
      '/api/runs/run-1',
      '/api/runs/run-1/cancel',
      '/api/runs/run-1/events',
      '/api/runs/run-1/stages/approve',
      '/api/runs/run-1/stages/approve/gate',
      '/api/health',
      '/api/profiles',
      '/api/profiles/work',
      '/api/audit',
    ),
    fc.tuple(fc.constantFrom('/api/pipelines/', '/api/runs/', '/api/runs/run-2/stages/', '/api/', '/api/profiles/'), fc.array(segment, { maxLength: 4 })).map(
      ([base, parts]) => base + parts.join('/'),
    ),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc
      .array(fc.tuple(fc.constantFrom('limit', 'after', 'state', 'pipeline', 'cursor', 'x', 'type', 'profile', 'run', 'since', 'until'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer().map(String))), {
        maxLength: 3,
      })
      .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&') : '')),
  );
  const knownBody = fc.oneof(
    fc.record({ yaml: fc.constantFrom(GATE_ONLY, INVALID, ''), strict: fc.oneof(fc.boolean(), fc.jsonValue()) }, { requiredKeys: [] }),
    fc.record({ pipeline: fc.oneof(fc.constant('gate-only'), fc.string()), input: fc.jsonValue() }, { requiredKeys: [] }),
    fc.record({ decision: fc.oneof(fc.constantFrom('accept', 'reject'), fc.jsonValue()), note: fc.oneof(fc.string(), fc.jsonValue()) }, { requiredKeys: [] }),
  );
  const body = fc.oneof(
    fc.constant(undefined),
    knownBody.map((b) => JSON.stringify(b)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 300 }),
    fc.string({ minLength: 2100, maxLength: 2200 }),
    fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  );
  const contentType = fc.oneof(
    fc.constantFrom(
      undefined,
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/vnd.api+json',
      'text/yaml',
      'application/x-yaml',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
    ),
    fc.string({ maxLength: 30 }).filter((s) => /^[\x21-\x7e]*$/.test(s)),
  );
  const method = fc.constantFrom('get', 'post', 'put', 'patch', 'delete');

  it('never answers 5xx, and every error has a code', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(method, path, query, contentType, body, async (m, p, q, type, payload) => {
        let req = http[m](p + q);
        if (type !== undefined) req = req.set('Content-Type', type);
        const res = payload === undefined ? await req : await req.send(payload);
        seen.add(res.status);
        if (res.status >= 500) throw new Error(`${m.toUpperCase()} ${p}${q} (${type}) → ${res.status} ${res.text}`);
        if (res.status >= 400) expect(typeof res.body.code).toBe('string');
      }),
      { numRuns: 300 },
    );
    expect(t.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
    // The generators reach past the first checks: success, validation, routing, size and media type.
    expect([...seen]).toEqual(expect.arrayContaining([200, 400, 404, 413, 415]));
  }, 120000);
});
