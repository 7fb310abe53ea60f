import request from 'supertest';
import { createTestApp, type TestApp } from '../test/test-app';
import { GATE_ONLY } from '../test/pipeline-sources';

/** What every request goes through: body parsing, limits, routing, errors, access, docs. */
describe('api request handling', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  afterEach(() => t.app.close());

  describe('bodies and errors', () => {
    beforeEach(async () => {
      t = await createTestApp({ bodyLimitBytes: 4096 });
      http = request(t.app.getHttpServer());
    });

    it('answers malformed JSON with 400 invalid_json', async () => {
      for (const body of ['{"yaml": ', '{yaml: 1}', '"just a string"', '42', 'nul']) {
        const res = await http.post('/api/runs').set('Content-Type', 'application/json').send(body).expect(400);
        expect(res.body.code).toBe('invalid_json');
      }
    });

    it('refuses a JSON array body with invalid_request', async () => {
      const res = await http.post('/api/runs').send([{ yaml: GATE_ONLY }]).expect(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', details: [{ field: 'body' }] });
    });

    it('refuses a body over the limit with 413 body_too_large, as JSON or YAML, on any route', async () => {
      const big = 'x'.repeat(5000);
      expect((await http.post('/api/runs').send({ yaml: big }).expect(413)).body).toMatchObject({
        code: 'body_too_large',
        details: { limitBytes: 4096 },
      });
      expect((await http.post('/api/pipelines/validate').set('Content-Type', 'text/yaml').send(big).expect(413)).body.code).toBe(
        'body_too_large',
      );
      expect((await http.post('/api/nowhere').send({ big }).expect(413)).body.code).toBe('body_too_large');
    });

    it('accepts a body just under the limit', async () => {
      const yaml = GATE_ONLY + '#'.repeat(4000 - GATE_ONLY.length);
      await http.post('/api/pipelines/validate').set('Content-Type', 'text/yaml').send(yaml).expect(200);
    });

    it('refuses form bodies, unknown media types and non-UTF charsets with 415', async () => {
      const form = await http.post('/api/runs').type('form').send({ pipeline: 'x' }).expect(415);
      expect(form.body.code).toBe('unsupported_media_type');
      expect(form.body.message).toContain('application/json');
      await http.post('/api/runs/run-1/stages/a/gate').set('Content-Type', 'application/octet-stream').send(Buffer.from('{}')).expect(415);
      await http.post('/api/runs').set('Content-Type', 'application/json; charset=latin1').send('{}').expect(415);
      await http.post('/api/runs/run-1/stages/a/gate').set('Content-Type', 'text/plain').send('accept').expect(415);
    });

    it('answers unknown routes and methods with 404 route_not_found', async () => {
      for (const [method, path] of [
        ['get', '/api/nowhere'],
        ['delete', '/api/runs'],
        ['put', '/api/pipelines/x'],
        ['get', '/api/runs/r1/stages'],
        ['get', '/'],
      ] as const) {
        const res = await http[method](path).expect(404);
        expect(res.body.code).toBe('route_not_found');
      }
    });

    it('answers an unexpected failure with 500 internal_error, logging the stack and sending neither it nor the message', async () => {
      t.engine.failWith = new Error('ECONNREFUSED 10.0.0.7:6379 password=hunter2');
      const res = await http.get('/api/runs/run-1').expect(500);
      expect(res.body).toEqual({ code: 'internal_error', message: expect.any(String) });
      expect(JSON.stringify(res.body)).not.toMatch(/hunter2|ECONNREFUSED|at /);
      const logged = t.logger.entries.find((e) => e.level === 'error' && e.message.includes('ECONNREFUSED'));
      expect(logged?.message).toContain('GET /api/runs/run-1');
      expect(String(logged?.extra[0])).toMatch(/^Error: ECONNREFUSED.*\n\s+at /);
    });

    it('refuses "__proto__" keys anywhere in a body (they would swap a DTO\'s prototype past validation)', async () => {
      for (const body of [
        `{"yaml": ${JSON.stringify(GATE_ONLY)}, "__proto__": {"strict": true}}`,
        `{"yaml": ${JSON.stringify(GATE_ONLY)}, "input": {"a": [{"__proto__": {"polluted": true}}]}}`,
      ]) {
        const res = await http.post('/api/runs').set('Content-Type', 'application/json').send(body).expect(400);
        expect(res.body).toMatchObject({ code: 'invalid_request', details: [{ field: '__proto__' }] });
      }
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect((await http.get('/api/runs').expect(200)).body.items).toEqual([]);
    });
  });

  describe('with a token configured', () => {
    const token = 'rest-token-0123456789abcdef';

    beforeEach(async () => {
      t = await createTestApp({ token });
      http = request(t.app.getHttpServer());
    });

    it('refuses requests without the token or with another, with 401 unauthorized and WWW-Authenticate', async () => {
      const none = await http.get('/api/runs').expect(401);
      expect(none.body.code).toBe('unauthorized');
      expect(none.headers['www-authenticate']).toBe('Bearer');
      await http.get('/api/runs').set('Authorization', `Bearer ${token}0`).expect(401);
      await http.get('/api/runs').set('Authorization', `Basic ${token}`).expect(401);
      await http.get(`/api/runs?token=${token}`).expect(401);
      await http.post('/api/runs').send({ yaml: GATE_ONLY }).expect(401);
      expect((await http.get('/api/runs').set('Authorization', `Bearer ${token}`).expect(200)).body.items).toEqual([]);
    });

    it('checks the token before the route exists or the body is validated', async () => {
      await http.post('/api/runs').send({ nonsense: true }).expect(401);
      expect((await http.get('/api/runs').expect(401)).body.code).toBe('unauthorized');
    });

    it('leaves health open', async () => {
      await http.get('/api/health').expect(200);
    });
  });

  describe('without a token', () => {
    beforeEach(async () => {
      t = await createTestApp();
      http = request(t.app.getHttpServer());
    });

    it('serves loopback clients without credentials', async () => {
      await http.get('/api/runs').expect(200);
    });

    it('refuses a page of another origin with 403 origin_forbidden (no cross-site cancels or registrations)', async () => {
      const res = await http.post('/api/pipelines').set('Origin', 'https://evil.example').send({ yaml: GATE_ONLY }).expect(403);
      expect(res.body.code).toBe('origin_forbidden');
      await http.get('/api/pipelines').expect(200, []);
    });

    it('refuses a non-loopback Host with 403 host_forbidden (DNS rebinding)', async () => {
      expect((await http.get('/api/runs').set('Host', 'rebind.evil.example:3000').expect(403)).body.code).toBe('host_forbidden');
    });
  });

  describe('API docs', () => {
    beforeEach(async () => {
      t = await createTestApp({ token: 'docs-token-0123456789abc' });
      http = request(t.app.getHttpServer());
    });

    it('serves Swagger UI at /api/docs and the OpenAPI document at /api/docs-json, every route with its errors', async () => {
      expect((await http.get('/api/docs').expect(200)).text).toMatch(/swagger/i);
      const doc = (await http.get('/api/docs-json').expect(200)).body;
      const routes = Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>).flatMap(
        ([path, ops]) => Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
      );
      expect(routes.map((r) => r.route).sort()).toEqual(
        [
          'GET /api/health',
          'GET /api/pipelines',
          'GET /api/pipelines/schema',
          'GET /api/pipelines/{name}',
          'GET /api/runs',
          'GET /api/runs/{run}',
          'GET /api/runs/{run}/events',
          'GET /api/runs/{run}/stages/{stage}',
          'GET /api/runs/{run}/artifacts',
          'GET /api/runs/{run}/artifacts/{stage}/{attempt}/{name}',
          'POST /api/pipelines',
          'POST /api/pipelines/validate',
          'POST /api/runs',
          'POST /api/runs/{run}/cancel',
          'POST /api/runs/{run}/stages/{stage}/gate',
          'POST /api/runs/{run}/stages/{stage}/live-view/tickets',
          'PUT /api/profiles/{name}/check',
          'POST /api/profiles',
          'POST /api/profiles/{name}/check',
          'GET /api/profiles',
          'GET /api/profiles/{name}',
          'DELETE /api/profiles/{name}',
          'GET /api/audit',
        ].sort(),
      );
      for (const { route, op } of routes) {
        const statuses = Object.keys(op.responses);
        expect({ route, ok: statuses.some((s) => s.startsWith('2')) }).toEqual({ route, ok: true });
        if (route !== 'GET /api/health') expect({ route, has401: statuses.includes('401') }).toEqual({ route, has401: true });
      }
      expect(doc.components.schemas.ErrorResponseDto.required).toEqual(['code', 'message']);
    });
  });
});
