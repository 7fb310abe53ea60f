import { ConflictError, StageflowError } from '@stageflow/contracts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { createProfilesTestApp, type ProfilesTestApp } from './profiles.test-app';

/** The login check of a profile: set at create or with PUT, run with POST …/check (browser-host faked here). */
describe('profile login checks (routes)', () => {
  let t: ProfilesTestApp;
  let http: ReturnType<typeof request>;
  const check = { url: 'https://app.test/account', logged_out_url: '*/login*', cookie: 'sid' };

  beforeEach(async () => {
    t = await createProfilesTestApp();
    http = request(t.app.getHttpServer());
  });
  afterEach(() => t.close());

  describe('setting the check', () => {
    it('takes a check at create time and shows it in GET one and the list', async () => {
      const created = await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      expect(created.body).toEqual({ name: 'work', scope: 'local', createdAt: expect.any(String), check });
      expect((await http.get('/api/profiles/work').expect(200)).body.check).toEqual(check);
      expect((await http.get('/api/profiles').expect(200)).body[0].check).toEqual(check);
    });

    it('replaces it with PUT …/check', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      const res = await http.put('/api/profiles/work/check').send({ url: 'http://127.0.0.1:8080/me', selector: '#user' }).expect(200);
      expect(res.body).toMatchObject({ name: 'work', check: { url: 'http://127.0.0.1:8080/me', selector: '#user' } });
      expect(res.body.check.logged_out_url).toBeUndefined();
    });

    it.each([
      [{ url: 'ftp://app.test/x', cookie: 'sid' }, 'check.url', /absolute http\(s\) URL/],
      [{ url: 'https://user:pw@app.test/x', cookie: 'sid' }, 'check.url', /no user:password/],
      [{ cookie: 'sid' }, 'check.url', /absolute http\(s\) URL/],
      [{ url: 'https://app.test/x', cookie: 'sid=1' }, 'check.cookie', /name of the login cookie only/],
      [{ url: 'https://app.test/x', selector: '' }, 'check.selector', /must not be empty/],
      [{ url: 'https://app.test/x', logged_out_url: 5 }, 'check.logged_out_url', /string/],
      [{ url: 'https://app.test/x', cookie: 'sid', path: '/tmp' }, 'check.path', /not a known field/],
      [{ url: 'https://app.test/x' }, 'check', /at least one of logged_out_url .*selector .*cookie/],
      ['https://app.test/x', 'check', /must be an object/],
    ])('refuses the check %j with 400 naming %s, creating no profile', async (bad, field, problem) => {
      const res = await http.post('/api/profiles').send({ name: 'work', check: bad }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      const named = (res.body.details as Array<{ field: string; problem: string }>).filter((d) => d.field === field).map((d) => d.problem);
      expect(named).toContainEqual(expect.stringMatching(problem));
      expect(res.body.message).toContain(field);
      expect(existsSync(join(t.home, 'browser', 'local', 'work'))).toBe(false);
    });

    it('validates PUT the same way, naming the body fields', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      const res = await http.put('/api/profiles/work/check').send({ url: 'https://app.test/x' }).expect(400);
      expect(res.body.details).toEqual([{ field: 'body', problem: expect.stringContaining('at least one of logged_out_url') }]);
      expect((await http.put('/api/profiles/nope/check').send(check).expect(404)).body.code).toBe('profile_not_found');
      expect((await http.put('/api/profiles/..%2Fx/check').send(check).expect(400)).body.code).toBe('profile_name_invalid');
    });
  });

  describe('POST …/check (check now)', () => {
    it('runs the stored check in browser-host, keeps the result, shows it as lastCheck', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      t.browserHost.answer = { logged_in: false, url: 'https://app.test/login?next=/account' };
      const res = await http.post('/api/profiles/work/check').expect(200);
      const last = { loggedIn: false, url: 'https://app.test/login?next=/account', checkedAt: '2030-01-02T03:04:05.000Z' };
      expect(res.body).toEqual(last);
      expect(t.browserHost.calls).toEqual([{ profile: 'work', criteria: { url: check.url, loggedOutUrl: '*/login*', cookie: 'sid' } }]);
      expect((await http.get('/api/profiles/work').expect(200)).body.lastCheck).toEqual(last);
      expect((await http.get('/api/profiles').expect(200)).body[0].lastCheck).toEqual(last);
    });

    it('runs a check given in the body instead, without storing it', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      await http.post('/api/profiles/work/check').send({ check: { url: 'https://other.test/', selector: '#me' } }).expect(200);
      expect(t.browserHost.calls[0].criteria).toEqual({ url: 'https://other.test/', selector: '#me' });
      expect((await http.get('/api/profiles/work').expect(200)).body.check).toEqual(check);
    });

    it('answers 422 saying how to set a check when none is stored and none given', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      const res = await http.post('/api/profiles/work/check').expect(422);
      expect(res.body.code).toBe('profile_check_missing');
      expect(res.body.message).toContain('PUT /api/profiles/work/check');
      expect(t.browserHost.calls).toEqual([]);
    });

    it('passes browser-host\'s 409 on, naming the run, and keeps no result', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      t.browserHost.answer = new ConflictError('profile_leased', 'Browser profile "work" is in use by run r-1 …', { profile: 'work', holder: { runId: 'r-1', since: 'x' } });
      const res = await http.post('/api/profiles/work/check').expect(409);
      expect(res.body).toMatchObject({ code: 'profile_leased', details: { holder: { runId: 'r-1' } } });
      expect((await http.get('/api/profiles/work').expect(200)).body.lastCheck).toBeUndefined();
    });

    it('shows a check holding the profile as a check, not as a run', async () => {
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      t.leases.hold('work', 'check_zzzzzzzz_0123456789ab');
      expect((await http.get('/api/profiles/work').expect(200)).body.lease.holder).toEqual({ runId: 'check_zzzzzzzz_0123456789ab', since: expect.any(String), check: true });
      t.leases.hold('work', 'mi3k2x8a-0a1b2c3d4e');
      expect((await http.get('/api/profiles').expect(200)).body[0].lease.holder).toEqual({ runId: 'mi3k2x8a-0a1b2c3d4e', since: expect.any(String) });
    });

    it('refuses an unknown profile (404) and a bad body check (400) before calling browser-host', async () => {
      expect((await http.post('/api/profiles/nope/check').expect(404)).body.code).toBe('profile_not_found');
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      const res = await http.post('/api/profiles/work/check').send({ check: { url: 'nope', cookie: 'sid' } }).expect(400);
      expect(res.body.details[0]).toMatchObject({ field: 'check.url' });
      expect((await http.post('/api/profiles/work/check').send({ url: check.url }).expect(400)).body.details[0].field).toBe('url');
      expect(t.browserHost.calls).toEqual([]);
    });

    it('says browser-host is unavailable as 503 with what to do', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      t.browserHost.answer = new StageflowError('browser_host_unavailable', 'could not reach browser-host … Is it running?', 503);
      expect((await http.post('/api/profiles/work/check').expect(503)).body.code).toBe('browser_host_unavailable');
    });

    it('forgets the check and its result when the profile is deleted', async () => {
      await http.post('/api/profiles').send({ name: 'work', check }).expect(201);
      await http.post('/api/profiles/work/check').expect(200);
      await http.delete('/api/profiles/work').expect(204);
      await http.post('/api/profiles').send({ name: 'work' }).expect(201);
      const again = (await http.get('/api/profiles/work').expect(200)).body;
      expect(again.check).toBeUndefined();
      expect(again.lastCheck).toBeUndefined();
    });
  });
});
