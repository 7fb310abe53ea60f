import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import {
  allEvents,
  freePort,
  Harness,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';

/**
 * Browser stages end to end: real Redis, a real runner worker, browser-host
 * as its own process (its own home, host id and key prefix shared with the
 * runner) and real headless Chromium.
 */
jest.setTimeout(180_000);

const SCRIPT = join(__dirname, '../testing/cdp-tab.stage.cjs');

/** Chromium browser processes (not helpers) this test's browser-host started: pid and browser id. */
async function browsersOf(hostId: string): Promise<Array<{ pid: number; browserId: string }>> {
  const found: Array<{ pid: number; browserId: string }> = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (!argv.includes(`--stageflow-host=${hostId}`) || argv.some((a) => a.startsWith('--type='))) continue;
    const browserId = argv.find((a) => a.startsWith('--stageflow-browser-id='))?.slice('--stageflow-browser-id='.length);
    found.push({ pid: Number(entry), browserId: browserId ?? `argv:${argv[0]}` });
  }
  return found;
}

describe('browser stages (runner + browser-host + Chromium)', () => {
  let h: Harness;
  let host: ChildProcess;
  let site: Server;
  let siteUrl: string;
  let root: string;
  let home: string;
  let hostId: string;
  let leases: ProfileLeases;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sf-bstage-'));
    home = join(root, 'home');
    await mkdir(home, { recursive: true, mode: 0o700 });
    await writeFile(join(home, 'config.yaml'), 'browser:\n  blocked_sites: [blocked.test]\n');
    hostId = `it-${randomBytes(3).toString('hex')}`;
    const prefix = uniquePrefix();
    const port = await freePort();
    host = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
      cwd: process.cwd(),
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        STAGEFLOW_REDIS_URL: testRedisUrl(),
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_HOME: home,
        STAGEFLOW_HOST_ID: hostId,
        STAGEFLOW_BROWSER_TMP: root,
        STAGEFLOW_BROWSER_HOST_PORT: String(port),
        STAGEFLOW_LOG_LEVEL: 'warn',
        SWC_NODE_PROJECT: 'tsconfig.base.json',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(
      'browser-host to answer /health',
      async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status === 200,
      90_000,
    );
    h = await startHarness({ prefix, config: { browserHostUrl: `http://127.0.0.1:${port}` } });
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
    if (host?.exitCode === null) {
      const exited = new Promise((resolve) => host.once('exit', resolve));
      host.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    }
    for (const { pid } of await browsersOf(hostId)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    await h?.close();
    await rm(root, { recursive: true, force: true });
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
      () => void browsersOf(hostId).then((found) => found.forEach((b) => seenBrowsers.set(b.browserId, `${b.pid}`))),
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
    expect(await browsersOf(hostId)).toEqual([]);
  });
});
