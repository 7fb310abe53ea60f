import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { StageflowError } from '@stageflow/contracts';
import { createProfilesTestApp, type ProfilesTestApp } from './profiles.test-app';

const RULE = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

describe('profiles routes', () => {
  let t: ProfilesTestApp;
  let http: ReturnType<typeof request>;
  let dirOf: (name: string) => string;
  const auditLines = (): Record<string, unknown>[] => {
    const file = join(t.home, 'browser', 'audit.jsonl');
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  };

  beforeEach(async () => {
    t = await createProfilesTestApp();
    http = request(t.app.getHttpServer());
    dirOf = (name) => join(t.home, 'browser', 'local', name);
  });
  afterEach(() => t.close());

  describe('POST /api/profiles', () => {
    it('creates an owner-only folder in the local scope, answers 201 with the profile (no path) and audits it', async () => {
      const res = await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      expect(res.body).toEqual({ name: 'work', scope: 'local', createdAt: expect.any(String) });
      expect(statSync(dirOf('work')).mode & 0o777).toBe(0o700);
      expect(auditLines()).toEqual([{ at: expect.any(String), type: 'profile_created', profile: 'work', scope: 'local' }]);
    });

    it('refuses a second profile of the same name, in any case, with 409 profile_exists', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      expect((await http.post('/api/profiles').send({ name: 'work' }).expect(409)).body.code).toBe('profile_exists');
      const res = await http.post('/api/profiles').send({ name: 'Work' }).expect(409);
      expect(res.body.message).toMatch(/"work" already exists/);
    });

    it.each(['..', '.', 'a/b', '../../etc', 'a\\b', '\u0000', 'a\u0000b', '', 'x'.repeat(65), '.hidden', 'a..b', ' work'])(
      'refuses the name %j with 400 profile_name_invalid quoting the rule, creating nothing',
      async (name) => {
        const res = await http.post('/api/profiles').send({ name }).expect(400);
        expect(res.body.code).toBe('profile_name_invalid');
        expect(res.body.message).toContain(RULE);
        expect(res.body.message).toMatch(/Choose a name/);
        expect(existsSync(join(t.home, 'browser', 'local'))).toBe(false);
      },
    );

    it('refuses a missing or non-string name and unknown fields with invalid_request (scope is not the client\'s)', async () => {
      expect((await http.post('/api/profiles').send({}).expect(400)).body).toMatchObject({
        code: 'invalid_request',
        details: [{ field: 'name' }],
      });
      expect((await http.post('/api/profiles').send({ name: 7 }).expect(400)).body.code).toBe('invalid_request');
      const res = await http.post('/api/profiles').send({ name: 'work', scope: 'other' }).expect(400);
      expect(res.body.details).toEqual([{ field: 'scope', problem: 'is not a known field; remove it' }]);
      expect(existsSync(join(t.home, 'browser', 'other'))).toBe(false);
    });

    it('takes JSON only', async () => {
      expect((await http.post('/api/profiles').set('Content-Type', 'text/plain').send('work').expect(415)).body.code).toBe(
        'unsupported_media_type',
      );
    });
  });

  describe('GET /api/profiles', () => {
    it('lists nothing on a fresh home', async () => {
      expect((await http.get('/api/profiles').expect(200)).body).toEqual([]);
    });

    it('lists profiles by name, each with the run holding it and the runs waiting, without tokens', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      await http.post('/api/profiles').send({ name: 'github' }).expect(201);
      t.leases.hold('work', 'run-1').queue('work', 'run-2');
      const res = await http.get('/api/profiles').expect(200);
      expect(res.body).toEqual([
        { name: 'github', scope: 'local', createdAt: expect.any(String), lease: { waiters: [] } },
        {
          name: 'work',
          scope: 'local',
          createdAt: expect.any(String),
          lease: {
            holder: { runId: 'run-1', since: '2030-01-01T00:00:00.000Z' },
            waiters: [{ runId: 'run-2', since: '2030-01-01T00:05:00.000Z' }],
          },
        },
      ]);
      expect(res.text).not.toMatch(/token|ticket/);
    });
  });

  describe('GET /api/profiles/:name', () => {
    it('returns the profile with its size, holder and waiters (first in line first)', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      writeFileSync(join(dirOf('work'), 'Cookies'), 'x'.repeat(2048));
      t.leases.hold('work', 'run-1').queue('work', 'run-2').queue('work', 'run-3', '2030-01-01T00:06:00.000Z');
      expect((await http.get('/api/profiles/work').expect(200)).body).toEqual({
        name: 'work',
        scope: 'local',
        createdAt: expect.any(String),
        sizeBytes: 2048,
        lease: {
          holder: { runId: 'run-1', since: '2030-01-01T00:00:00.000Z' },
          waiters: [
            { runId: 'run-2', since: '2030-01-01T00:05:00.000Z' },
            { runId: 'run-3', since: '2030-01-01T00:06:00.000Z' },
          ],
        },
      });
    });

    it('answers 404 profile_not_found for an unknown name, and 400 profile_name_invalid for a bad one', async () => {
      expect((await http.get('/api/profiles/nope').expect(404)).body.code).toBe('profile_not_found');
      for (const path of ['a%2Fb', '..%2F..%2Fetc', '%00', 'a%5Cb', '.hidden', 'x'.repeat(65)]) {
        const res = await http.get(`/api/profiles/${path}`).expect(400);
        expect({ path, code: res.body.code }).toEqual({ path, code: 'profile_name_invalid' });
      }
    });
  });

  describe('DELETE /api/profiles/:name', () => {
    beforeEach(async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      writeFileSync(join(dirOf('work'), 'Cookies'), 'secret');
    });

    it('deletes a free profile: 204, folder gone, audited', async () => {
      await http.delete('/api/profiles/work').expect(204, '');
      expect(existsSync(dirOf('work'))).toBe(false);
      expect(auditLines().map((r) => r['type'])).toEqual(['profile_created', 'profile_deleted']);
      expect(auditLines()[1]).toMatchObject({ browserData: 'none' });
      expect((await http.get('/api/profiles/work').expect(404)).body.code).toBe('profile_not_found');
    });

    it('refuses while a run holds it: 409 profile_leased naming the run; the folder stays', async () => {
      t.leases.hold('work', 'run-42');
      const res = await http.delete('/api/profiles/work').expect(409);
      expect(res.body).toEqual({
        code: 'profile_leased',
        message: expect.stringMatching(/in use by run run-42 .*wait until run run-42 ends, or cancel it/),
        details: { profile: 'work', holder: { runId: 'run-42', since: '2030-01-01T00:00:00.000Z' }, waiters: [] },
      });
      expect(readFileSync(join(dirOf('work'), 'Cookies'), 'utf8')).toBe('secret');
      expect(auditLines().map((r) => r['type'])).toEqual(['profile_created']);
    });

    it('refuses while runs only wait for it, and says so', async () => {
      t.leases.queue('work', 'run-9');
      const res = await http.delete('/api/profiles/work').expect(409);
      expect(res.body.code).toBe('profile_leased');
      expect(res.body.message).toMatch(/run run-9 is waiting for it/);
      expect(existsSync(dirOf('work'))).toBe(true);
    });

    it('answers 404 for an unknown profile and 400 for a bad name', async () => {
      expect((await http.delete('/api/profiles/other').expect(404)).body.code).toBe('profile_not_found');
      expect((await http.delete('/api/profiles/..%2Fwork').expect(400)).body.code).toBe('profile_name_invalid');
      expect(existsSync(dirOf('work'))).toBe(true);
    });

    it('asks browser-host to remove the browser data first and audits what it removed, without a path or volume name', async () => {
      t.browserData.answer = 'volume_removed';
      await http.delete('/api/profiles/work').expect(204, '');
      expect(t.browserData.calls).toEqual(['work']);
      expect(existsSync(dirOf('work'))).toBe(false);
      const deleted = auditLines().find((r) => r['type'] === 'profile_deleted');
      expect(deleted).toEqual({ at: expect.any(String), type: 'profile_deleted', profile: 'work', scope: 'local', browserData: 'volume_removed' });
      expect(JSON.stringify(auditLines())).not.toMatch(/sf-profile|\//);
    });

    it('refuses with 503 browser_host_unavailable, keeping folder, record and audit, when browser-host does not answer', async () => {
      t.browserData.answer = new StageflowError(
        'browser_host_unavailable',
        'Profile "work" was not deleted: browser-host … did not answer. Nothing was removed. Start browser-host and delete the profile again.',
        503,
      );
      const res = await http.delete('/api/profiles/work').expect(503);
      expect(res.body).toMatchObject({ code: 'browser_host_unavailable', message: expect.stringMatching(/Start browser-host and delete the profile again/) });
      expect(readFileSync(join(dirOf('work'), 'Cookies'), 'utf8')).toBe('secret');
      expect(auditLines().map((r) => r['type'])).toEqual(['profile_created']);
      await http.get('/api/profiles/work').expect(200);
    });

    it('passes on browser-host\'s 409 (a container still uses the volume) and keeps the profile', async () => {
      t.browserData.answer = new StageflowError('profile_in_use', 'Profile "work" was not deleted. Its browser container still exists (sf-browser-x).', 409);
      const res = await http.delete('/api/profiles/work').expect(409);
      expect(res.body.code).toBe('profile_in_use');
      expect(existsSync(dirOf('work'))).toBe(true);
    });

    it('checks the lease before it asks browser-host: a leased profile never reaches it', async () => {
      t.leases.hold('work', 'run-42');
      await http.delete('/api/profiles/work').expect(409);
      expect(t.browserData.calls).toEqual([]);
    });

    it('answers 500 internal_error, folder kept, when the leases cannot be read', async () => {
      t.leases.failWith = new Error('connect ECONNREFUSED 127.0.0.1:6379');
      const res = await http.delete('/api/profiles/work').expect(500);
      expect(res.body.code).toBe('internal_error');
      expect(res.text).not.toContain('ECONNREFUSED');
      expect(existsSync(dirOf('work'))).toBe(true);
    });
  });

  it('guards every profile route with the token when one is configured', async () => {
    const guarded = await createProfilesTestApp({ token: 'profiles-token-0123456789' });
    try {
      const h = request(guarded.app.getHttpServer());
      for (const res of [
        await h.get('/api/profiles'),
        await h.post('/api/profiles').send({ name: 'work' }),
        await h.get('/api/profiles/work'),
        await h.delete('/api/profiles/work'),
      ]) {
        expect(res.status).toBe(401);
      }
      expect(existsSync(join(guarded.home, 'browser'))).toBe(false);
    } finally {
      await guarded.close();
    }
  });
});
