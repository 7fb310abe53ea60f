import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { createTestApp, type TestApp } from '../../test/test-app';

describe('the console at /', () => {
  let dir: string;
  let t: TestApp;
  let http: ReturnType<typeof request>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sf-console-'));
    writeFileSync(join(dir, 'index.html'), '<html>console</html>');
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
    writeFileSync(join(dir, '.env'), 'SECRET=1');
    mkdirSync(join(dir, 'api'));
    writeFileSync(join(dir, 'api', 'health'), 'shadow');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeEach(async () => {
    t = await createTestApp({ consoleDir: dir, bodyLimitBytes: 2048, listen: true });
    http = request(t.app.getHttpServer());
  });
  afterEach(() => t.app.close());

  it('serves index.html at / and for client-side routes, and its assets', async () => {
    expect((await http.get('/').expect(200)).text).toBe('<html>console</html>');
    expect((await http.get('/runs/abc').expect(200)).text).toBe('<html>console</html>');
    const js = await http.get('/assets/app.js').expect(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
  });

  it('answers a missing asset with 404, and never serves dotfiles or paths outside the folder', async () => {
    expect((await http.get('/assets/missing.js').expect(404)).body.code).toBe('route_not_found');
    expect((await http.get('/.env').expect(403)).body.code).toBe('forbidden');
    for (const path of ['/%2e%2e/%2e%2e/etc/passwd', '/assets/..%2f..%2f..%2f..%2fetc%2fpasswd', '/..%5c..%5cetc%5cpasswd']) {
      const res = await rawGet(t, path);
      expect({ path, leaked: res.body.includes('root:') }).toEqual({ path, leaked: false });
      // Refused, or (a name with backslashes is just an odd file name on Linux) the console's own page.
      expect(res.status === 403 || res.body === '<html>console</html>').toBe(true);
    }
  });

  it('leaves /api alone: routes, 404s and body errors stay the api\'s', async () => {
    await http.get('/api/health').expect(200, { status: 'ok' });
    expect((await http.get('/api/nowhere').expect(404)).body.code).toBe('route_not_found');
    expect((await http.post('/api/runs').set('Content-Type', 'application/json').send('{bad').expect(400)).body.code).toBe('invalid_json');
    expect((await http.post('/api/runs').send({ yaml: 'x'.repeat(3000) }).expect(413)).body.code).toBe('body_too_large');
  });
});

/** A GET with the path sent byte for byte (supertest would normalise "%2e%2e"). */
function rawGet(t: TestApp, path: string): Promise<{ status: number; body: string }> {
  const { port } = t.app.getHttpServer().address() as { port: number };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
