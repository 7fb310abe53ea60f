import { AuditLog, type AuditRecordInput } from '@stageflow/audit';
import request from 'supertest';
import { createProfilesTestApp, type ProfilesTestApp } from '../profiles/profiles.test-app';

/** Records one second apart from 2024-05-01T10:00:00Z, written the way the Host writes them. */
async function seed(home: string, records: AuditRecordInput[]): Promise<void> {
  let t = Date.parse('2024-05-01T10:00:00.000Z');
  const log = new AuditLog(home, { now: () => new Date((t += 1000) - 1000) });
  for (const r of records) await log.append(r);
}

const used = (runId: string, profile = 'work'): AuditRecordInput => ({ type: 'profile_used', profile, scope: 'local', runId, stageId: 'login' });

describe('GET /api/audit', () => {
  let t: ProfilesTestApp;
  let http: ReturnType<typeof request>;

  beforeEach(async () => {
    t = await createProfilesTestApp();
    http = request(t.app.getHttpServer());
  });
  afterEach(() => t.close());

  it('is empty before anything was audited', async () => {
    expect((await http.get('/api/audit').expect(200)).body).toEqual({ items: [] });
  });

  it('shows profile_created and profile_deleted from the profile routes, newest first, names only', async () => {
    await http.post('/api/profiles').send({ name: 'work' }).expect(201);
    await http.delete('/api/profiles/work').expect(204);
    const { body } = await http.get('/api/audit').expect(200);
    expect(body).toEqual({
      items: [
        { at: expect.any(String), type: 'profile_deleted', profile: 'work', scope: 'local', browserData: 'none' },
        { at: expect.any(String), type: 'profile_created', profile: 'work', scope: 'local' },
      ],
    });
  });

  it('filters by type, profile, run and time, and pages with limit and next', async () => {
    await seed(t.home, [
      { type: 'profile_created', profile: 'work', scope: 'local' },
      used('run-1'),
      used('run-2'),
      { type: 'navigation_outside_allowlist', profile: 'work', scope: 'local', runId: 'run-2', stageId: 'login', host: 'evil.example' },
      used('run-3', 'github'),
    ]);
    const ids = (items: { runId?: string; type: string }[]): string[] => items.map((r) => r.runId ?? r.type);

    expect(ids((await http.get('/api/audit?type=profile_used').expect(200)).body.items)).toEqual(['run-3', 'run-2', 'run-1']);
    expect(ids((await http.get('/api/audit?profile=github').expect(200)).body.items)).toEqual(['run-3']);
    const byRun = (await http.get('/api/audit?run=run-2').expect(200)).body.items;
    expect(byRun).toEqual([
      { at: '2024-05-01T10:00:03.000Z', type: 'navigation_outside_allowlist', profile: 'work', scope: 'local', runId: 'run-2', stageId: 'login', host: 'evil.example' },
      { at: '2024-05-01T10:00:02.000Z', type: 'profile_used', profile: 'work', scope: 'local', runId: 'run-2', stageId: 'login' },
    ]);
    const window = await http.get('/api/audit?since=2024-05-01T10:00:01Z&until=2024-05-01T10:00:03Z').expect(200);
    expect(ids(window.body.items)).toEqual(['run-2', 'run-1']);

    const pages: { items: { runId?: string; type: string }[]; next?: string }[] = [];
    let cursor = '';
    do {
      const page = (await http.get(`/api/audit?limit=2${cursor}`).expect(200)).body;
      pages.push(page);
      cursor = page.next === undefined ? '' : `&cursor=${page.next}`;
    } while (cursor && pages.length < 10);
    expect(pages.map((p) => ids(p.items))).toEqual([['run-3', 'run-2'], ['run-2', 'run-1'], ['profile_created']]);
    expect(pages.map((p) => p.items[0].type)).toEqual(['profile_used', 'profile_used', 'profile_created']);
    expect(pages[2].next).toBeUndefined();
  });

  it.each([
    ['type=profile_burned', 'type'],
    ['profile=a/b', 'profile'],
    ['profile=..', 'profile'],
    ['run=a%2Fb', 'run'],
    ['since=yesterday', 'since'],
    ['until=2024-13-45', 'until'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['runId=run-1', 'runId'],
  ])('refuses ?%s with invalid_request on %s', async (query, field) => {
    const res = await http.get(`/api/audit?${query}`).expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('refuses a cursor it did not hand out with 400 audit_query_invalid', async () => {
    const res = await http.get('/api/audit?cursor=not-a-cursor').expect(400);
    expect(res.body.code).toBe('audit_query_invalid');
    expect(res.body.message).toMatch(/cursor must be the nextCursor of a previous page/);
  });
});
