import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ProfileLeases } from '@stageflow/leases';
import { uniquePrefix } from '@stageflow/testing';
import {
  allEvents,
  Harness,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';
import { BrowserHostProcess, startBrowserHost } from '../testing/processes.harness';

/**
 * Browser stages end to end: real Redis, a real runner worker, browser-host
 * as its own process (its own home, host id and key prefix shared with the
 * runner) and real headless Chromium.
 */
jest.setTimeout(180_000);

const SCRIPT = join(__dirname, '../testing/cdp-tab.stage.cjs');

describe('browser stages (runner + browser-host + Chromium)', () => {
  let h: Harness;
  let host: BrowserHostProcess;
  let site: Server;
  let siteUrl: string;
  let home: string;
  let leases: ProfileLeases;

  beforeAll(async () => {
    const prefix = uniquePrefix();
    host = await startBrowserHost(prefix, 'browser:\n  blocked_sites: [blocked.test]\n');
    home = host.home;
    h = await startHarness({ prefix, config: { browserHostUrl: host.url } });
    leases = new ProfileLeases({ redis: h.config.redis.url, keys: h.keys });
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const name = url.searchParams.get('name');
      if (url.pathname === '/set' && name) res.setHeader('set-cookie', `${name}=1; Max-Age=3600; Path=/`);
      res.setHeader('content-type', 'text/html');
      res.end(`<title>${url.pathname}</title>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await leases?.close();
    await host?.stop();
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    await h?.close();
  });

  it('gives two parallel stages of one run their own tab in one browser, sharing cookies, with no profile path anywhere', async () => {
    const browser = { profile: 'p', headed: false, allowDomains: ['127.0.0.1'] };
    const env = { NODE_PATH: join(process.cwd(), 'node_modules') };
    const pipeline = pipelineOf(
      [
        runStage('setter', ['node', SCRIPT, 'set', siteUrl], { browser, env }),
        runStage('reader', ['node', SCRIPT, 'read', siteUrl], { browser, env }),
      ],
      [],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const seenBrowsers = new Map<string, string>();
    const sampling = setInterval(
      () => void host.browsers().then((found) => found.forEach((b) => seenBrowsers.set(b.browserId, `${b.pid}`))),
      100,
    );
    const run = await waitForRun(h.runs, started.id, 'ended', 120_000).finally(() => clearInterval(sampling));

    const byId = Object.fromEntries(run.stages.map((s) => [s.id, s]));
    expect({ state: run.state, reason: run.reason, tails: run.stages.map((s) => s.logTail) }).toMatchObject({ state: 'success' });
    const setter = byId['setter'].envelope?.output as { targetId: string; tabUrl: string; seesShared: boolean; cookies: string };
    const reader = byId['reader'].envelope?.output as { targetId: string; tabUrl: string; seesShared: boolean; cookies: string };
    // Each stage drove its own tab...
    expect(setter.targetId).toBeTruthy();
    expect(reader.targetId).toBeTruthy();
    expect(setter.targetId).not.toBe(reader.targetId);
    expect(setter.tabUrl).toBe(`${siteUrl}/set?name=shared`);
    expect(reader.tabUrl).toBe(`${siteUrl}/read`);
    // ...of one shared browser, whose cookies both saw.
    expect([...seenBrowsers.keys()]).toHaveLength(1);
    expect(setter.seesShared).toBe(true);
    expect(reader.seesShared).toBe(true);
    // A browser stage's envelope is redacted: the cookie values never reach the run's history.
    expect(reader.cookies).toBe('[redacted:cookie]');

    // No profile path (nor the Stageflow home it lives in) in the run's history.
    const history = JSON.stringify([run, await allEvents(h.runs, started.id)]);
    expect(history).not.toContain(home);
    expect(history).not.toContain('profiles/p');

    // browser-host tears the run down and releases the lease.
    await waitFor('browser-host to release the lease of the ended run', async () => !(await leases.describe('local', 'p')).holder);
  });

  it('fails the attempt with a reason naming browser-host\'s code when it refuses the session', async () => {
    const pipeline = pipelineOf(
      [runStage('visit', 'echo should not run', { browser: { headed: false, allowDomains: ['blocked.test'] } })],
      [],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 60_000);
    const visit = run.stages.find((s) => s.id === 'visit');
    expect(run.state).toBe('failed');
    expect(visit?.reason).toMatch(/^browser-host refused the stage session \(browser_site_blocked\): /);
    expect(visit?.logTail).toEqual([]);
    expect(await host.browsers()).toEqual([]);
  });
});
