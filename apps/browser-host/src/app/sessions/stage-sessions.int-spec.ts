import type { INestApplication } from '@nestjs/common';
import { RedisKeys, type StageSession } from '@stageflow/contracts';
import { RUNS_API, StageAttempts, type RunsApi, type RunView } from '@stageflow/engine';
import { ProfileLeases } from '@stageflow/leases';
import type { Pipeline } from '@stageflow/pipeline';
import { testRedisUrl } from '@stageflow/testing';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import {
  bootHost,
  chromiumOf,
  closePagesExcept,
  deleteKeys,
  exists,
  hostDirs,
  hostEnv,
  isAlive,
  killHostBrowsers,
  pagesOf,
  removeDirs,
  StageTab,
  startAgentDaemon,
  startSite,
  waitFor,
  type HostDirs,
  type HostInProcess,
  type TestSite,
} from '../browsers/testing/browser-host.harness';

/**
 * Stage sessions against real Redis, a real engine run and real Chromium (headless,
 * 3 launches: the shared browser, its restart after SIGKILL, one throw-away browser).
 * Tests in the first describe share one run and run in order.
 */
jest.setTimeout(180_000);

const CONFIG = [
  'browser:',
  '  blocked_sites: [blocked.test]',
  // Every *.test host is this machine: the throw-away allowlist test stays on 127.0.0.1.
  '  launch_args: ["--host-resolver-rules=MAP *.test 127.0.0.1"]',
  '',
].join('\n');

let dirs: HostDirs;
let host: HostInProcess;
let http: ReturnType<typeof request>;
let site: TestSite;
let runs: RunsApi;
let keys: RedisKeys;

beforeAll(async () => {
  dirs = await hostDirs(CONFIG);
  site = await startSite();
  host = await bootHost(hostEnv(dirs, testRedisUrl()));
  http = request(host.app.getHttpServer());
  runs = host.app.get<RunsApi>(RUNS_API);
  keys = new RedisKeys(dirs.prefix);
});

afterAll(async () => {
  await host?.app.close();
  await killHostBrowsers(dirs.hostId);
  await site?.close();
  await deleteKeys(testRedisUrl(), dirs.prefix);
  await removeDirs(dirs);
});

function app(): INestApplication {
  return host.app;
}

const pipeline = (name: string, stages: Pipeline['stages']): Pipeline => ({ version: 1, name, maxActiveStages: 4, stages, edges: [] });
const runStage = (id: string, retries = 0): Pipeline['stages'][number] => ({ id, kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries });

async function open(body: Record<string, unknown>): Promise<StageSession> {
  const res = await http.post('/internal/sessions').send(body);
  if (res.status !== 201) throw new Error(`open answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as StageSession;
}

async function registered(key: string): Promise<string[]> {
  return app().get(BrowserHostRedis).client.smembers(key);
}

it('reports what this Host can show an operator', async () => {
  const res = await http.get('/internal/capabilities');
  expect(res.status).toBe(200);
  expect(res.body.liveView).toBe(false);
  expect(['display', 'xvfb', 'headless']).toContain(res.body.headedMode);
  expect(res.body.screen).toBe(res.body.headedMode === 'display');
});

describe('the shared browser of a run and profile', () => {
  let run: RunView;
  let token: number;
  let first: StageSession;
  let second: StageSession;
  let cookieSetAt = 0;
  const echo = () => `http://127.0.0.1:${site.port}/echo`;

  beforeAll(async () => {
    run = await runs.startRun({ pipeline: pipeline('shared', [runStage('work1'), runStage('work2', 1), runStage('work3')]), input: {} });
    const grant = await app().get(ProfileLeases).acquire('local', 'p1', run.id);
    if (grant.status !== 'granted') throw new Error('the lease should be free');
    token = grant.grant.token;
  });

  const stage = (stageId: string, extra: Record<string, unknown> = {}) => ({
    runId: run.id,
    stageId,
    attempt: 1,
    profile: 'p1',
    leaseToken: token,
    headed: false,
    allowDomains: [],
    ...extra,
  });

  it('gives two parallel stages one Chrome and a visible tab each; they share cookies, not pages', async () => {
    [first, second] = await Promise.all([open(stage('work1')), open(stage('work2'))]);

    // One browser: one registry entry, one Chromium process, one endpoint.
    expect(first.browserId).toBe(second.browserId);
    expect(first.cdpEndpoint).toBe(second.cdpEndpoint);
    expect(first.targetId).not.toBe(second.targetId);
    expect(await registered(keys.runBrowsers(run.id))).toEqual([first.browserId]);
    const chromes = await chromiumOf(dirs.hostId);
    expect(chromes.map((c) => c.browserId)).toEqual([first.browserId]);

    expect(first.env).toEqual({
      AGENT_BROWSER_CDP: first.cdpEndpoint,
      AGENT_BROWSER_SESSION: `sf-${run.id}-work1-1`,
      AGENT_BROWSER_PIN_TAB: '1',
      AGENT_BROWSER_NO_AUTO_DIALOG: '1',
      AGENT_BROWSER_SOCKET_DIR: first.socketDir,
      AGENT_BROWSER_NO_VERSION_CHECK: '1',
      STAGEFLOW_CDP_TARGET: first.targetId,
    });
    expect(first.cdpEndpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\//);
    expect((await lstat(first.socketDir)).mode & 0o777).toBe(0o700);
    // No profile path reaches a caller.
    expect(JSON.stringify([first, second])).not.toContain(dirs.home);

    const a = await StageTab.attach(first.cdpEndpoint, first.targetId);
    const b = await StageTab.attach(second.cdpEndpoint, second.targetId);
    try {
      expect(await a.goto(`http://127.0.0.1:${site.port}/set?name=shared`)).toBeUndefined();
      cookieSetAt = Date.now();
      expect(await b.cookiesAt(echo())).toEqual(['shared']);
      // b navigating did not move a.
      expect(await a.url()).toBe(`http://127.0.0.1:${site.port}/set?name=shared`);
      expect(await b.url()).toBe(echo());
      // Each tab is drawn (its own window), also beside the spare: a hidden tab sends
      // a live view no frames and has its timers throttled.
      expect(await a.evaluate('document.visibilityState')).toBe('visible');
      expect(await b.evaluate('document.visibilityState')).toBe('visible');
    } finally {
      await a.detach();
      await b.detach();
    }
  });

  it('closing one session closes its tab and agent-browser daemon; the browser and the other tab stay', async () => {
    const daemon = await startAgentDaemon(first.socketDir, first.env['AGENT_BROWSER_SESSION']);
    const pid = (await chromiumOf(dirs.hostId))[0].pid;

    expect((await http.delete(`/internal/sessions/${first.sessionId}`)).status).toBe(204);
    expect((await http.delete(`/internal/sessions/${first.sessionId}`)).status).toBe(204);

    const pages = await pagesOf(second.cdpEndpoint);
    expect(pages).not.toContain(first.targetId);
    expect(pages).toContain(second.targetId);
    expect(isAlive(pid)).toBe(true);
    await waitFor('the agent-browser daemon to exit', async () => !isAlive(daemon));
    expect((await readdir(first.socketDir)).filter((f) => f.startsWith(`${first.sessionId}.`))).toEqual([]);
    expect((await http.get(`/internal/sessions/${first.sessionId}`)).status).toBe(404);
    expect((await http.get(`/internal/sessions/${second.sessionId}`)).body).toMatchObject({ runId: run.id, stageId: 'work2', profile: 'p1' });
  });

  it('closes a stage\'s session when the engine retries it (its runner was killed), keeping the browser even when that was its last page', async () => {
    // Leave the stage's tab as the browser's only page.
    await closePagesExcept(second.cdpEndpoint, second.targetId);
    expect(await pagesOf(second.cdpEndpoint)).toEqual([second.targetId]);
    const pid = (await chromiumOf(dirs.hostId))[0].pid;

    // What the engine does when a stage's runner vanished: attempt 1 lost, attempt 2 queued.
    const attempts = app().get(StageAttempts);
    const job = { runId: run.id, stageId: 'work2', attempt: 1 };
    expect((await attempts.claim(job, 'test-runner')).outcome).toBe('run');
    expect(await attempts.recordLost(job, 'its runner was killed')).toBe('recorded');

    await waitFor('the watcher to close the session', async () => (await http.get(`/internal/sessions/${second.sessionId}`)).status === 404);
    const pages = await pagesOf(second.cdpEndpoint);
    expect(pages).not.toContain(second.targetId);
    expect(pages).toHaveLength(1);
    expect(isAlive(pid)).toBe(true);
  });

  it('restarts a Chromium SIGKILLed mid-run at the next open, with the persistent cookie kept', async () => {
    // Chrome commits cookies to disk about every 30 s; a SIGKILL loses younger ones.
    const wait = cookieSetAt + 35_000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const [dead] = await chromiumOf(dirs.hostId);
    process.kill(-dead.pid, 'SIGKILL');
    await waitFor('the killed browser to be gone', async () => !isAlive(dead.pid));

    const again = await open(stage('work3'));
    expect(again.browserId).toBe(second.browserId);
    expect(again.cdpEndpoint).not.toBe(second.cdpEndpoint);
    const [restarted] = await chromiumOf(dirs.hostId);
    expect(restarted.pid).not.toBe(dead.pid);
    const record = await app().get(BrowserHostRedis).client.hgetall(keys.hostBrowser(again.browserId));
    expect(record).toMatchObject({ pid: String(restarted.pid), wsEndpoint: again.cdpEndpoint });
    expect(Object.values(record).join(' ')).not.toContain(dirs.home);

    const tab = await StageTab.attach(again.cdpEndpoint, again.targetId);
    try {
      expect(await tab.cookiesAt(echo())).toEqual(['shared']);
    } finally {
      await tab.detach();
    }
  });

  it('keeps a spare blank tab in the shared browser, so the next stage takes a tab that is already there', async () => {
    const work3 = (await http.get(`/internal/sessions/sf-${run.id}-work3-1`)).body as StageSession;
    // The anchor page, work3's tab, and the spare made after work3's open.
    const before = await waitFor('the spare tab to be made', async () => {
      const pages = await pagesOf(work3.cdpEndpoint);
      return pages.length === 3 ? pages : undefined;
    });
    const next = await open(stage('work1', { attempt: 2 }));
    expect(next.targetId).not.toBe(work3.targetId);
    expect(before).toContain(next.targetId);
    await http.delete(`/internal/sessions/${next.sessionId}`).expect(204);
    expect(await pagesOf(work3.cdpEndpoint)).not.toContain(next.targetId);
  });

  it('refuses a stale lease token (409) and a blocked site (422) before any browser starts; a bad body is 400', async () => {
    const before = await chromiumOf(dirs.hostId);
    const stale = await http.post('/internal/sessions').send(stage('work1', { attempt: 2, leaseToken: token + 1 }));
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('lease_not_held');

    const blocked = await http
      .post('/internal/sessions')
      .send({ runId: run.id, stageId: 'login', attempt: 1, headed: false, allowDomains: [], loginUrl: 'https://accounts.blocked.test/login' });
    expect(blocked.status).toBe(422);
    expect(blocked.body).toMatchObject({ code: 'browser_site_blocked' });
    expect(blocked.body.message).not.toContain('/login');

    const other = await runs.startRun({ pipeline: pipeline('blocked', [runStage('s')]), input: {} });
    const grant = await app().get(ProfileLeases).acquire('local', 'p-blocked', other.id);
    if (grant.status !== 'granted') throw new Error('free lease expected');
    const blockedProfile = await http
      .post('/internal/sessions')
      .send({ runId: other.id, stageId: 's', attempt: 1, profile: 'p-blocked', leaseToken: grant.grant.token, headed: false, allowDomains: ['*.blocked.test'] });
    expect(blockedProfile.status).toBe(422);

    const bad = await http.post('/internal/sessions').send({ runId: run.id });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('contract_violation');

    expect(await chromiumOf(dirs.hostId)).toEqual(before);
    expect(await registered(keys.runBrowsers(other.id))).toEqual([]);
    expect(await exists(join(dirs.home, 'browser', 'local', 'p-blocked'))).toBe(false);
    await runs.cancelRun(other.id);
  });

  it('closes the browser gracefully when the run ends, releases the lease and removes the socket dir', async () => {
    const [browser] = await chromiumOf(dirs.hostId);
    const socketDir = (await http.get(`/internal/sessions/sf-${run.id}-work3-1`)).body.socketDir as string;
    expect(await exists(socketDir)).toBe(true);

    await runs.cancelRun(run.id);

    await waitFor('the browser to be closed', async () => !isAlive(browser.pid));
    await waitFor('the lease to be released', async () => !(await app().get(ProfileLeases).describe('local', 'p1')).holder);
    await waitFor('the socket dir to be removed', async () => !(await exists(socketDir)));
    expect(await registered(keys.runBrowsers(run.id))).toEqual([]);
    expect(await registered(keys.runBrowserSessions(run.id))).toEqual([]);
    // Chrome removes its profile lock only when it shuts down cleanly (a SIGKILL leaves it).
    expect(await exists(join(dirs.home, 'browser', 'local', 'p1', 'SingletonLock'))).toBe(false);
    expect(await exists(join(dirs.home, 'browser', 'local', 'p1'))).toBe(true);
  });
});

describe('a throw-away browser (no profile)', () => {
  it('enforces allow_domains, reports what it refused, and deletes its profile when the session closes', async () => {
    const run = await runs.startRun({ pipeline: pipeline('throwaway', [runStage('fetch')]), input: {} });
    const attempts = app().get(StageAttempts);
    expect((await attempts.claim({ runId: run.id, stageId: 'fetch', attempt: 1 }, 'test-runner')).outcome).toBe('run');

    const session = await open({ runId: run.id, stageId: 'fetch', attempt: 1, headed: false, allowDomains: ['allowed.test'] });
    expect(await registered(keys.runBrowsers(run.id))).toEqual([session.browserId]);
    const [browser] = (await chromiumOf(dirs.hostId)).filter((c) => c.browserId === session.browserId);
    const throwawayRoot = host.config.browser.throwawayRoot;
    expect((await readdir(throwawayRoot)).filter((n) => n.startsWith(`${session.browserId}.`))).toHaveLength(1);

    const allowed = `http://allowed.test:${site.port}`;
    const other = `http://other.test:${site.port}`;
    const tab = await StageTab.attach(session.cdpEndpoint, session.targetId);
    try {
      expect(await tab.goto(`${allowed}/page?img=${encodeURIComponent(`${other}/pixel.gif`)}`)).toBeUndefined();
      expect(await tab.evaluate<number>('document.getElementById("img").naturalWidth')).toBe(0);
      expect(await tab.goto(`${other}/`)).toBe('net::ERR_BLOCKED_BY_CLIENT');
    } finally {
      await tab.detach();
    }
    expect(site.seen).toContain('allowed.test /page');
    expect(site.seen.filter((s) => s.startsWith('other.test'))).toEqual([]);

    const view = await waitFor('both refusals to be reported', async () => {
      const body = (await http.get(`/internal/sessions/${session.sessionId}`)).body as { blockedRequests: Array<{ host: string; resourceType: string }> };
      return body.blockedRequests.length > 0 ? body : undefined;
    });
    // Reported once per host: the image came first.
    expect(view.blockedRequests).toEqual([expect.objectContaining({ host: 'other.test', resourceType: 'Image' })]);
    const logged = await waitFor('the refusal in the run history', async () => {
      const events = await runs.readEvents(run.id, 0, 1000);
      return events.find((e) => e.type === 'stage.log' && JSON.stringify(e.data).includes('other.test'));
    });
    expect(logged).toMatchObject({ stageId: 'fetch', data: { stream: 'stderr' } });

    expect((await http.delete(`/internal/sessions/${session.sessionId}`)).status).toBe(204);
    expect(isAlive(browser.pid)).toBe(false);
    expect((await readdir(throwawayRoot)).filter((n) => n.startsWith(`${session.browserId}.`))).toEqual([]);
    expect(await registered(keys.runBrowsers(run.id))).toEqual([]);
    await runs.cancelRun(run.id);
  });
});
