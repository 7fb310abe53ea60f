import request from 'supertest';
import { createTestApp, type TestApp } from '../../test/test-app';
import { GATE_ONLY, GATE_THEN_COMMAND, INVALID, WITH_WARNING } from '../../test/pipeline-sources';

describe('pipelines routes', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeEach(async () => {
    t = await createTestApp();
    http = request(t.app.getHttpServer());
  });
  afterEach(() => t.app.close());

  describe('POST /api/pipelines/validate', () => {
    it('validates JSON {yaml}: valid, no diagnostics', async () => {
      const res = await http.post('/api/pipelines/validate').send({ yaml: GATE_ONLY }).expect(200);
      expect(res.body).toEqual({ valid: true, errors: [], warnings: [] });
    });

    it.each(['text/yaml', 'application/x-yaml', 'text/plain'])('reads the YAML itself sent as %s', async (type) => {
      const res = await http.post('/api/pipelines/validate').set('Content-Type', type).send(INVALID).expect(200);
      expect(res.body.valid).toBe(false);
      expect(res.body.errors.map((d: { code: string }) => d.code)).toEqual(['wrong_type', 'unknown_key']);
      expect(res.body.errors[0]).toMatchObject({ severity: 'error', file: '<inline>', line: 2, path: 'stages' });
      expect(res.body.errors[0].hint).toEqual(expect.any(String));
    });

    it('names the file in diagnostics and turns warnings into errors when strict', async () => {
      const lax = await http.post('/api/pipelines/validate').send({ yaml: WITH_WARNING }).expect(200);
      expect(lax.body).toMatchObject({ valid: true, errors: [], warnings: [{ code: 'yaml_warning' }] });
      const strict = await http
        .post('/api/pipelines/validate')
        .send({ yaml: WITH_WARNING, strict: true, file: 'ci/tagged.yaml' })
        .expect(200);
      expect(strict.body).toMatchObject({ valid: false, errors: [{ code: 'yaml_warning', file: 'ci/tagged.yaml' }] });
    });

    it('refuses a body without yaml, a wrong type and an unknown field with invalid_request', async () => {
      const res = await http.post('/api/pipelines/validate').send({ yaml: 3, strict: 'yes', extra: true }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      const fields = res.body.details.map((d: { field: string }) => d.field).sort();
      expect(fields).toEqual(['extra', 'strict', 'yaml']);
      expect(res.body.details.find((d: { field: string }) => d.field === 'extra').problem).toMatch(/not a known field/);
    });

    it('refuses other content types with 415', async () => {
      const res = await http.post('/api/pipelines/validate').set('Content-Type', 'application/x-www-form-urlencoded').send('yaml=x');
      expect(res.status).toBe(415);
      expect(res.body.code).toBe('unsupported_media_type');
      expect(res.body.message).toContain('text/yaml');
    });
  });

  describe('POST /api/pipelines', () => {
    it('registers from JSON, returns 201 with the entry and its warnings, and replaces by name (201 again)', async () => {
      const first = await http.post('/api/pipelines').send({ yaml: WITH_WARNING }).expect(201);
      expect(first.body).toMatchObject({ name: 'tagged', stages: 1, source: WITH_WARNING, warnings: [{ code: 'yaml_warning' }] });

      const replaced = WITH_WARNING.replace('!shell echo a', 'echo b');
      const second = await http.post('/api/pipelines').set('Content-Type', 'text/yaml').send(replaced).expect(201);
      expect(second.body).toMatchObject({ name: 'tagged', source: replaced, warnings: [] });

      const list = await http.get('/api/pipelines').expect(200);
      expect(list.body).toEqual([{ name: 'tagged', stages: 1, updatedAt: expect.any(String) }]);
    });

    it('refuses an invalid pipeline with 422 pipeline_invalid and every diagnostic, registering nothing', async () => {
      const res = await http.post('/api/pipelines').send({ yaml: INVALID }).expect(422);
      expect(res.body.code).toBe('pipeline_invalid');
      expect(res.body.message).toContain('<inline>:2:');
      expect(res.body.details.errors).toHaveLength(2);
      expect(res.body.details.warnings).toEqual([]);
      await http.get('/api/pipelines').expect(200, []);
    });

    it('refuses warnings when strict', async () => {
      const res = await http.post('/api/pipelines').send({ yaml: WITH_WARNING, strict: true }).expect(422);
      expect(res.body.details.errors[0].code).toBe('yaml_warning');
    });

    it('refuses a pipeline named "schema", which GET /api/pipelines/schema would shadow', async () => {
      const res = await http.post('/api/pipelines').send({ yaml: GATE_ONLY.replace('gate-only', 'schema') }).expect(422);
      expect(res.body.code).toBe('pipeline_name_reserved');
    });

    it('does not read text/plain (a cross-site form could send it without a preflight)', async () => {
      const res = await http.post('/api/pipelines').set('Content-Type', 'text/plain').send(GATE_ONLY).expect(415);
      expect(res.body.code).toBe('unsupported_media_type');
      await http.get('/api/pipelines').expect(200, []);
    });
  });

  describe('GET /api/pipelines/:name and /schema', () => {
    it('returns a registered pipeline with its source', async () => {
      await http.post('/api/pipelines').send({ yaml: GATE_THEN_COMMAND }).expect(201);
      const res = await http.get('/api/pipelines/approve-then-run').expect(200);
      expect(res.body).toEqual({ name: 'approve-then-run', stages: 2, source: GATE_THEN_COMMAND, updatedAt: expect.any(String) });
    });

    it('answers an unknown name with 404 pipeline_not_found and a malformed one with 400 invalid_id', async () => {
      expect((await http.get('/api/pipelines/nope').expect(404)).body.code).toBe('pipeline_not_found');
      expect((await http.get('/api/pipelines/a.b').expect(400)).body.code).toBe('invalid_id');
      expect((await http.get(`/api/pipelines/${'x'.repeat(129)}`).expect(400)).body.code).toBe('invalid_id');
    });

    it('serves the JSON Schema of the format, not a pipeline called "schema"', async () => {
      const res = await http.get('/api/pipelines/schema').expect(200);
      expect(res.body.$schema).toMatch(/json-schema/);
      expect(JSON.stringify(res.body)).toContain('stages');
    });
  });
});
