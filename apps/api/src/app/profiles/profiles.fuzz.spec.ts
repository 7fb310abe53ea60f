import fc from 'fast-check';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import request from 'supertest';
import { createProfilesTestApp, type ProfilesTestApp } from './profiles.test-app';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Random requests to the profile and audit routes over a real temp home:
 * never a 5xx, every error has a code, no response names the home, and
 * nothing but valid profile folders ever appears on disk.
 */
describe('profile routes under random requests', () => {
  let t: ProfilesTestApp;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    t = await createProfilesTestApp();
    http = request(t.app.getHttpServer());
    for (const n of ['work', 'held', 'queued']) await http.post('/api/profiles').send({ name: n }).expect(201);
    t.leases.hold('held', 'run-1').queue('queued', 'run-2');
  });
  afterAll(() => t.close());

  const name = fc.oneof(
    { arbitrary: fc.constantFrom('work', 'held', 'queued'), weight: 3 },
    fc.constantFrom('work', 'Work', 'held', 'queued', '..', '.', 'a/b', 'a\\b', '\u0000', '.hidden', 'a..b', 'x'.repeat(64), 'x'.repeat(65), ''),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/),
    fc.string({ maxLength: 12 }),
  );
  const path = fc.oneof(
    { arbitrary: fc.constant('/api/profiles'), weight: 2 },
    fc.constant('/api/audit'),
    name.map((n) => `/api/profiles/${encodeURIComponent(n)}`),
    fc.constantFrom('/api/profiles/..%2F..%2Fetc', '/api/profiles/%2e%2e', '/api/profiles/a%5Cb', '/api/profiles/work/x', '/api/profiles/%FF'),
  );
  const body = fc.oneof(
    fc.constant(undefined),
    { arbitrary: name.map((n) => JSON.stringify({ name: n })), weight: 3 },
    fc.record({ name: fc.jsonValue(), scope: fc.constantFrom('local', '..', 'other') }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 50 }),
  );
  const query = fc.oneof(
    fc.constant(''),
    fc
      .array(fc.tuple(fc.constantFrom('type', 'profile', 'run', 'since', 'until', 'limit', 'cursor'), fc.oneof(name, fc.integer().map(String))), { maxLength: 3 })
      .map((pairs) => (pairs.length ? '?' + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&') : '')),
  );
  const method = fc.constantFrom('get', 'post', 'delete', 'put');

  it('never answers 5xx or leaks the home, and only valid profile folders appear', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(method, path, query, body, async (m, p, q, payload) => {
        let req = http[m](p + q);
        if (payload !== undefined) req = req.set('Content-Type', 'application/json');
        const res = payload === undefined ? await req : await req.send(payload);
        seen.add(res.status);
        if (res.status >= 500) throw new Error(`${m.toUpperCase()} ${p}${q} ${payload} → ${res.status} ${res.text}`);
        if (res.status >= 400) expect(typeof res.body.code).toBe('string');
        expect(res.text).not.toContain(basename(t.home));
      }),
      { numRuns: 400 },
    );
    // The generators get past the name checks: profiles are created, read, refused while leased, deleted.
    expect([...seen]).toEqual(expect.arrayContaining([200, 400, 404, 409]));
    expect(seen.has(201) || seen.has(204)).toBe(true);
    expect(readdirSync(t.home)).toEqual(['browser']);
    expect(readdirSync(join(t.home, 'browser')).sort()).toEqual(['audit.jsonl', 'local']);
    for (const entry of readdirSync(join(t.home, 'browser', 'local'))) expect(entry).toMatch(NAME);
    expect(t.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  }, 120000);
});
