import { ArtifactStore } from '@stageflow/artifacts';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { GATE_ONLY } from '../../test/pipeline-sources';
import { createTestApp, type TestApp } from '../../test/test-app';

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(32, 7)]);
const TOKEN = 'artifact-test-token-0123456789';

/** A response body as raw bytes, whatever its content type. */
const binary = (res: request.Response, done: (error: Error | null, body: Buffer) => void): void => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
};

describe('artifact routes', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;
  let base: string;
  let root: string;
  let store: ArtifactStore;
  let runId: string;
  const auth = { Authorization: `Bearer ${TOKEN}` };

  beforeEach(async () => {
    base = mkdtempSync(join(tmpdir(), 'sf-api-artifacts-'));
    root = join(base, 'artifacts');
    t = await createTestApp({ token: TOKEN, artifactsRoot: root });
    http = request(t.app.getHttpServer());
    store = new ArtifactStore({ root });
    runId = (await http.post('/api/runs').set(auth).send({ yaml: GATE_ONLY }).expect(201)).body.id;
  });

  afterEach(async () => {
    await t.app.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('lists a run\'s artifacts by stage, attempt and name with their download paths, and no file path', async () => {
    await store.write({ runId, stageId: 'login', attempt: 2 }, 'account.png', PNG);
    await store.write({ runId, stageId: 'build', attempt: 1 }, 'report.json', Buffer.from('{"ok":true}'));
    const res = await http.get(`/api/runs/${runId}/artifacts`).set(auth).expect(200);
    expect(res.body).toEqual({
      items: [
        {
          stage: 'build',
          attempt: 1,
          name: 'report.json',
          sizeBytes: 11,
          contentType: 'application/json',
          modifiedAt: expect.any(String),
          downloadPath: `/api/runs/${runId}/artifacts/build/1/report.json`,
        },
        {
          stage: 'login',
          attempt: 2,
          name: 'account.png',
          sizeBytes: PNG.length,
          contentType: 'image/png',
          modifiedAt: expect.any(String),
          downloadPath: `/api/runs/${runId}/artifacts/login/2/account.png`,
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toContain(base);
  });

  it('lists nothing for a run without artifacts, and 404 run_not_found for an unknown run', async () => {
    expect((await http.get(`/api/runs/${runId}/artifacts`).set(auth).expect(200)).body).toEqual({ items: [] });
    const res = await http.get('/api/runs/no-such-run/artifacts').set(auth).expect(404);
    expect(res.body.code).toBe('run_not_found');
  });

  it('downloads an artifact as an attachment with its content type, length and headers that keep it inert', async () => {
    await store.write({ runId, stageId: 'login', attempt: 1 }, 'account.png', PNG);
    const res = await http
      .get(`/api/runs/${runId}/artifacts/login/1/account.png`)
      .set(auth)
      .buffer(true)
      .parse(binary)
      .expect(200);
    expect(res.body).toEqual(PNG);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-length']).toBe(String(PNG.length));
    expect(res.headers['content-disposition']).toBe('attachment; filename="account.png"');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
  });

  it('serves HTML a run stage left as a plain download, never as a page of the api', async () => {
    await store.write({ runId, stageId: 'build', attempt: 1 }, 'page.html', Buffer.from('<script>alert(1)</script>'));
    const res = await http.get(`/api/runs/${runId}/artifacts/build/1/page.html`).set(auth).buffer(true).parse(binary).expect(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe('attachment; filename="page.html"');
  });

  it('answers 404 artifact_not_found for a missing artifact, attempt or stage, and for a link in its place', async () => {
    await store.write({ runId, stageId: 'login', attempt: 1 }, 'account.png', PNG);
    const dir = store.attemptDir({ runId, stageId: 'login', attempt: 1 });
    writeFileSync(join(base, 'secret.txt'), 'not an artifact');
    symlinkSync(join(base, 'secret.txt'), join(dir, 'secret.txt'));
    for (const path of ['login/1/other.png', 'login/2/account.png', 'build/1/account.png', 'login/1/secret.txt']) {
      const res = await http.get(`/api/runs/${runId}/artifacts/${path}`).set(auth).expect(404);
      expect(res.body).toEqual({
        code: 'artifact_not_found',
        message: expect.stringContaining(`Run ${runId} has no artifact`),
        details: { runId, stageId: path.split('/')[0], attempt: Number(path.split('/')[1]), name: path.split('/')[2] },
      });
      expect(res.body.message).not.toContain(base);
    }
    expect((await http.get(`/api/runs/nope/artifacts/login/1/account.png`).set(auth).expect(404)).body.code).toBe('run_not_found');
  });

  it.each([
    ['..%2F..%2Fsecret.txt', 'artifact_name_invalid'],
    ['%2E%2E', 'artifact_name_invalid'],
    ['.hidden', 'artifact_name_invalid'],
    ['a%20b.png', 'artifact_name_invalid'],
    ['a%00.png', 'artifact_name_invalid'],
  ])('refuses the name %s with 400 %s quoting the rule', async (name, code) => {
    mkdirSync(root, { recursive: true });
    writeFileSync(join(base, 'secret.txt'), 'not an artifact');
    const res = await http.get(`/api/runs/${runId}/artifacts/login/1/${name}`).set(auth).expect(400);
    expect(res.body.code).toBe(code);
    expect(res.body.message).toContain('^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
    expect(JSON.stringify(res.body)).not.toContain(base);
  });

  it.each([
    ['0', 'invalid_attempt'],
    ['1.5', 'invalid_attempt'],
    ['one', 'invalid_attempt'],
    ['-1', 'invalid_attempt'],
  ])('refuses the attempt %s with 400 %s', async (attempt, code) => {
    const res = await http.get(`/api/runs/${runId}/artifacts/login/${attempt}/a.png`).set(auth).expect(400);
    expect(res.body.code).toBe(code);
  });

  it('refuses a malformed stage or run id with 400 invalid_id', async () => {
    expect((await http.get(`/api/runs/${runId}/artifacts/..%2Fx/1/a.png`).set(auth).expect(400)).body.code).toBe('invalid_id');
    expect((await http.get('/api/runs/r%20x/artifacts').set(auth).expect(400)).body.code).toBe('invalid_id');
  });

  it('needs the token like every other route', async () => {
    await store.write({ runId, stageId: 'login', attempt: 1 }, 'account.png', PNG);
    expect((await http.get(`/api/runs/${runId}/artifacts`).expect(401)).body.code).toBe('unauthorized');
    expect((await http.get(`/api/runs/${runId}/artifacts/login/1/account.png`).expect(401)).body.code).toBe('unauthorized');
  });
});
