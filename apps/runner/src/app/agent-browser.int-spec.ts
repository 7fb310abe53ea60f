import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { ProfileLeases } from '@stageflow/leases';
import { uniquePrefix } from '@stageflow/testing';
import {
  allEvents,
  isAlive,
  Harness,
  pipelineOf,
  runStage,
  startHarness,
  waitFor,
  waitForRun,
} from '../testing/runner.harness';
import { BrowserHostProcess, startBrowserHost } from '../testing/processes.harness';

/**
 * The real agent-browser CLI in browser stages: real Redis, a real runner
 * worker, browser-host as its own process (its own home, host id and key
 * prefix shared with the runner), real headless Chromium, and stage commands
 * that call `agent-browser` with only the environment the runner gives them.
 */
jest.setTimeout(180_000);

const SCRIPT = join(__dirname, '../testing/agent-browser.stage.cjs');
const AGENT_BROWSER = join(process.cwd(), 'node_modules/.bin/agent-browser');

/** Live agent-browser processes whose environment names one of `sessions`. */
async function agentBrowsersOf(sessions: string[]): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || !isAlive(Number(entry))) continue;
    const env = (await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '')).split('\0');
    if (sessions.some((s) => env.includes(`AGENT_BROWSER_SESSION=${s}`))) found.push(Number(entry));
  }
  return found;
}

describe('agent-browser in browser stages (runner + browser-host + Chromium)', () => {
  let h: Harness;
  let host: BrowserHostProcess;
  let site: Server;
  let siteUrl: string;
  let root: string;
  let home: string;
  let leases: ProfileLeases;
  /** `<Host header> <path>` of every request the site got. */
  const requests: string[] = [];

  beforeAll(async () => {
    const prefix = uniquePrefix();
    host = await startBrowserHost(prefix, 'browser:\n  blocked_sites: [blocked.test]\n');
    ({ root, home } = host);
    h = await startHarness({ prefix, config: { browserHostUrl: host.url } });
    leases = new ProfileLeases({ redis: h.config.redis.url, keys: h.keys });
    // /set?sid=... sets a persistent cookie; every other page prints its path and the cookie it got.
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      requests.push(`${req.headers.host} ${url.pathname}`);
      const sid = url.searchParams.get('sid');
      if (url.pathname === '/set' && sid) res.setHeader('set-cookie', `sid=${sid}; Max-Age=3600; Path=/`);
      res.setHeader('content-type', 'text/html');
      res.end(`<title>${url.pathname}</title><p>page ${url.pathname.slice(1)}</p><p>cookie ${req.headers.cookie ?? 'none'}</p>`);
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

  it('lets two parallel stages drive their own tab of one shared browser with agent-browser, sharing its cookie, and ends their daemons', async () => {
    // allowDomains: the contract's parsed default (the harness skips the YAML parser).
    const browser = { profile: 'p', headed: false, allowDomains: ['127.0.0.1'] };
    const sid = randomBytes(6).toString('hex');
    const sync = await mkdtemp(join(root, 'sync-'));
    const visit = (path: string, peer: string) => ['node', SCRIPT, 'visit', AGENT_BROWSER, siteUrl, sid, path, sync, peer];
    const pipeline = pipelineOf(
      [
        runStage('login', ['node', SCRIPT, 'set', AGENT_BROWSER, siteUrl, sid], { browser }),
        runStage('a', visit('a', 'b'), { browser }),
        runStage('b', visit('b', 'a'), { browser }),
        runStage('after', ['node', SCRIPT, 'check', siteUrl], { browser }),
      ],
      [
        { from: 'login', to: 'a' },
        { from: 'login', to: 'b' },
        { from: 'a', to: 'after' },
        { from: 'b', to: 'after' },
      ],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const seenBrowsers = new Map<string, string>();
    const sampling = setInterval(
      () => void host.browsers().then((found) => found.forEach((b) => seenBrowsers.set(b.browserId, `${b.pid}`))),
      100,
    );
    const run = await waitForRun(h.runs, started.id, 'ended', 150_000).finally(() => clearInterval(sampling));

    const byId = Object.fromEntries(run.stages.map((s) => [s.id, s]));
    expect({ state: run.state, reason: run.reason, tails: run.stages.map((s) => [s.id, s.reason, s.logTail]) }).toMatchObject({ state: 'success' });
    type Visit = {
      agentName: string;
      daemonPid: number;
      peerOpened: boolean;
      url: string;
      snapshotShowsOwnPage: boolean;
      snapshotShowsSid: boolean;
      evalSeesSid: boolean;
      boundToStageTab: boolean;
      targetUrl: string;
    };
    const login = byId['login'].envelope?.output as { agentName: string; onSetPage: boolean; seesSid: boolean };
    const a = byId['a'].envelope?.output as Visit;
    const b = byId['b'].envelope?.output as Visit;
    const after = byId['after'].envelope?.output as { pageUrls: string[]; socketFiles: string[] };

    // (Booleans: the envelope of a browser stage is redacted, `sid=...` included.)
    expect(login).toEqual({ agentName: expect.any(String), onSetPage: true, seesSid: true });
    // Each stage's agent-browser stayed on its own tab (the one browser-host opened for it),
    // also after the parallel stage navigated its own: they do not move each other.
    for (const [v, path] of [[a, 'a'], [b, 'b']] as const) {
      expect(v).toEqual({
        agentName: expect.any(String),
        daemonPid: expect.any(Number),
        peerOpened: true,
        url: `${siteUrl}/${path}`,
        snapshotShowsOwnPage: true,
        snapshotShowsSid: true,
        evalSeesSid: true,
        boundToStageTab: true,
        targetUrl: expect.any(String),
      });
    }
    expect(a.agentName).not.toBe(b.agentName);
    // Each had its own agent-browser daemon running while the stage ran.
    expect(a.daemonPid).toBeGreaterThan(0);
    expect(b.daemonPid).toBeGreaterThan(0);
    expect(a.daemonPid).not.toBe(b.daemonPid);
    // One Chromium for the whole run.
    expect([...seenBrowsers.keys()]).toHaveLength(1);
    // By the time a later stage of the run starts, the earlier stages' tabs are closed
    // and their agent-browser daemons have left no pid or socket behind.
    expect(after.pageUrls.filter((u) => u.startsWith(siteUrl))).toEqual([]);
    const sessions = [login.agentName, a.agentName, b.agentName];
    expect(after.socketFiles.filter((f) => sessions.some((s) => f.startsWith(`${s}.`)))).toEqual([]);
    // After the run no agent-browser daemon of those sessions is still running.
    expect(await agentBrowsersOf(sessions)).toEqual([]);
    expect([isAlive(a.daemonPid), isAlive(b.daemonPid)]).toEqual([false, false]);

    await waitFor('browser-host to release the lease of the ended run', async () => !(await leases.describe('local', 'p')).holder);
    expect(await host.browsers()).toEqual([]);
  });

  it('records the hosts a profile stage opens outside allow_domains through the agent-browser wrapper, once each, and an unreadable activity', async () => {
    // Both loopback: 127.0.0.1 is allowed, localhost is not (allow_domains matches names, not addresses).
    const port = new URL(siteUrl).port;
    const browser = { profile: 'q', headed: false, allowDomains: ['127.0.0.1'] };
    // The stages call `agent-browser` by name, from the PATH the runner gives them.
    const env = { PATH: `${dirname(AGENT_BROWSER)}:${process.env['PATH'] ?? '/usr/bin:/bin'}` };
    const nav = [
      'set -e',
      `agent-browser open http://localhost:${port}/out-1 >/dev/null`,
      'first=$(agent-browser get url)',
      `agent-browser --json open "http://user:pw@localhost:${port}/out-2?token=abc123" >/dev/null`,
      `agent-browser open http://127.0.0.1:${port}/in >/dev/null`,
      'last=$(agent-browser get url)',
      'case $(command -v agent-browser) in */.stageflow/agent-browser-1/bin/agent-browser) wrapped=true ;; *) wrapped=false ;; esac',
      'printf \'{"first":"%s","last":"%s","wrapped":%s}\' "$first" "$last" "$wrapped" > "$STAGEFLOW_OUTPUT"',
    ].join('\n');
    const tamper = [
      'set -e',
      `agent-browser open http://localhost:${port}/tamper >/dev/null`,
      // The stage removes the record of what it opened.
      'rm .stageflow/agent-browser-1/activity.jsonl',
      'echo {} > "$STAGEFLOW_OUTPUT"',
    ].join('\n');
    const pipeline = pipelineOf([runStage('nav', nav, { browser, env }), runStage('tamper', tamper, { browser, env })], []);
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 150_000);
    expect({ state: run.state, stages: run.stages.map((s) => [s.id, s.state, s.reason, s.logTail]) }).toMatchObject({ state: 'success' });

    // agent-browser worked through the wrapper: the pages were opened, on both hosts.
    expect(run.stages.find((s) => s.id === 'nav')?.envelope?.output).toEqual({
      first: `http://localhost:${port}/out-1`,
      last: `http://127.0.0.1:${port}/in`,
      wrapped: true,
    });
    expect(requests).toEqual(
      expect.arrayContaining([`localhost:${port} /out-1`, `localhost:${port} /out-2`, `127.0.0.1:${port} /in`, `localhost:${port} /tamper`]),
    );

    const auditText = await readFile(join(home, 'browser', 'audit.jsonl'), 'utf8');
    const records = auditText
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, string>)
      .filter((r) => r['runId'] === started.id && r['type'] !== 'profile_used')
      .map(({ at: _at, ...r }) => r);
    expect(records).toEqual(
      expect.arrayContaining([
        { type: 'navigation_outside_allowlist', profile: 'q', scope: 'local', runId: started.id, stageId: 'nav', host: 'localhost' },
        { type: 'allowlist_unverified', profile: 'q', scope: 'local', runId: started.id, stageId: 'tamper', reason: 'activity_unreadable' },
      ]),
    );
    // Twice to localhost, once allowed: one record; nothing for the tampered stage's own navigation.
    expect(records).toHaveLength(2);
    expect(auditText).not.toMatch(/token|abc123|out-2|user:pw/);

    // The stage's history names the host; the runner removed the wrapper and its activity file.
    const events = await allEvents(h.runs, started.id);
    const notes = events.filter((e) => e.type === 'stage.log' && JSON.stringify(e.data).includes('allow_domains')).map((e) => [e.stageId, (e.data as { line: string }).line]);
    expect(notes).toEqual(
      expect.arrayContaining([
        ['nav', expect.stringContaining('this stage opened hosts outside allow_domains: localhost.')],
        ['tamper', expect.stringContaining('(activity_unreadable)')],
      ]),
    );
    expect(JSON.stringify(events)).not.toMatch(/abc123/);
    const stageflowDir = join(h.config.workDir, started.id, 'nav', '.stageflow');
    expect((await readdir(stageflowDir)).filter((f) => f.startsWith('agent-browser'))).toEqual([]);

    await waitFor('browser-host to release the lease of the ended run', async () => !(await leases.describe('local', 'q')).holder);
  });
});

