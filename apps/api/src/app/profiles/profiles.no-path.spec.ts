import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import request from 'supertest';
import { createProfilesTestApp, type ProfilesTestApp } from './profiles.test-app';

/**
 * Profile paths stay on the Host: no answer of the profile or audit routes,
 * success or error, holds the Stageflow home. The home is a fresh temp folder
 * with a random name, so finding that name anywhere in a response is a leak.
 */
describe('profile and audit responses never contain the home path', () => {
  let t: ProfilesTestApp;
  let http: ReturnType<typeof request>;
  const responses: { what: string; status: number; text: string }[] = [];

  const send = async (what: string, req: request.Test, status: number): Promise<void> => {
    const res = await req;
    expect({ what, status: res.status }).toEqual({ what, status });
    responses.push({ what, status: res.status, text: `${JSON.stringify(res.headers)}\n${res.text}` });
  };

  beforeAll(async () => {
    t = await createProfilesTestApp();
    http = request(t.app.getHttpServer());
    const scopeDir = join(t.home, 'browser', 'local');

    await send('create', http.post('/api/profiles').send({ name: 'work' }), 201);
    await send('create again', http.post('/api/profiles').send({ name: 'work' }), 409);
    await send('create in another case', http.post('/api/profiles').send({ name: 'WORK' }), 409);
    await send('create a bad name', http.post('/api/profiles').send({ name: '../escape' }), 400);
    await send('create naming a scope', http.post('/api/profiles').send({ name: 'x', scope: 'y' }), 400);
    writeFileSync(join(scopeDir, 'work', 'Cookies'), 'secret');
    t.leases.hold('work', 'run-1').queue('work', 'run-2');
    await send('list', http.get('/api/profiles'), 200);
    await send('get', http.get('/api/profiles/work'), 200);
    await send('get missing', http.get('/api/profiles/missing'), 404);
    await send('get a bad name', http.get('/api/profiles/..%2F..'), 400);
    await send('delete leased', http.delete('/api/profiles/work'), 409);
    await send('check with none set', http.post('/api/profiles/work/check'), 422);
    await send('set a check', http.put('/api/profiles/work/check').send({ url: 'https://app.test/account', cookie: 'sid' }), 200);
    await send('set a bad check', http.put('/api/profiles/work/check').send({ url: 'https://app.test/account' }), 400);
    await send('check now', http.post('/api/profiles/work/check'), 200);
    await send('get after a check', http.get('/api/profiles/work'), 200);
    await send('check a missing profile', http.post('/api/profiles/missing/check'), 404);

    // A link where a profile should be: refused, and the refusal names no path either.
    mkdirSync(join(t.home, 'elsewhere'));
    symlinkSync(join(t.home, 'elsewhere'), join(scopeDir, 'linked'));
    await send('get a link', http.get('/api/profiles/linked'), 409);
    await send('check a link', http.post('/api/profiles/linked/check'), 409);
    await send('delete a link', http.delete('/api/profiles/linked'), 409);
    await send('create over a link', http.post('/api/profiles').send({ name: 'linked' }), 409);

    t.leases.free('work');
    await send('delete', http.delete('/api/profiles/work'), 204);
    await send('delete again', http.delete('/api/profiles/work'), 404);
    await send('audit', http.get('/api/audit'), 200);
    await send('audit filtered', http.get('/api/audit?profile=work&type=profile_deleted&limit=1'), 200);
    await send('audit bad cursor', http.get('/api/audit?cursor=zz'), 400);
    await send('api docs', http.get('/api/docs-json'), 200);

    // The disk failing under the api: Node's error messages carry paths, the client gets none.
    rmSync(scopeDir, { recursive: true, force: true });
    writeFileSync(scopeDir, 'not a folder');
    await send('list on a broken store', http.get('/api/profiles'), 500);
    await send('create on a broken store', http.post('/api/profiles').send({ name: 'next' }), 500);
    rmSync(join(t.home, 'browser', 'audit.jsonl'));
    mkdirSync(join(t.home, 'browser', 'audit.jsonl'));
    await send('audit on a broken log', http.get('/api/audit'), 500);
  });
  afterAll(() => t.close());

  it('went through every route and outcome', () => {
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200, 201, 204, 400, 404, 409, 422, 500]));
  });

  it('holds neither the home, its real path, nor its random folder name in any response', () => {
    const needles = [t.home, realpathSync(t.home), basename(t.home), '/browser/local'];
    const leaks = responses.flatMap((r) => needles.filter((n) => r.text.includes(n)).map((n) => `${r.what}: ${n}`));
    expect(leaks).toEqual([]);
  });

  it('did log the failures for the operator (paths belong in the log, not the response)', () => {
    expect(t.logger.entries.filter((e) => e.level === 'error').length).toBeGreaterThanOrEqual(3);
  });
});
