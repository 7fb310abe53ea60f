import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from '@stageflow/artifacts';
import type { RunEvent } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import type { StageDefinition, StepAction } from '@stageflow/pipeline';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import { allEvents, freePort, Harness, pipelineOf, startHarness, waitFor, waitForRun } from '../testing/runner.harness';

/**
 * `steps` stages end to end: real Redis, a real runner worker, browser-host as
 * its own process and real headless Chromium, against a small login site on
 * 127.0.0.1 whose session cookie only a logged-in browser has.
 */
jest.setTimeout(180_000);

const SESSION = 'sid-7f3a';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The login site: /login (form), POST /login (sets the cookie), /account (only with the cookie). */
function loginSite(): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://site');
    const loggedIn = (req.headers.cookie ?? '').split(/;\s*/).includes(`session=${SESSION}`);
    const html = (body: string) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html><body>${body}</body></html>`);
    };
    if (url.pathname === '/login' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('user') === 'demo' && form.get('password') === 'demo-password') {
          // A session cookie (no Max-Age): it lives as long as the run's shared browser.
          res.writeHead(303, { location: '/account', 'set-cookie': `session=${SESSION}; Path=/; HttpOnly` });
        } else {
          res.writeHead(303, { location: '/login?error=1' });
        }
        res.end();
      });
      return;
    }
    if (url.pathname === '/login') {
      return html(`<h1>Sign in</h1>
        <form method="post" action="/login">
          <input id="user" name="user" value="prefilled">
          <input id="password" name="password" type="password">
          <button id="sign-in" type="submit">Sign in</button>
        </form>`);
    }
    if (url.pathname === '/account') {
      if (!loggedIn) {
        res.writeHead(302, { location: '/login' });
        return res.end();
      }
      return html(`<h1>Welcome back</h1><p>Signed in as <span id="account-name"> Demo User </span></p>
        <a class="profile" href="/users/demo">Profile</a><div style="height:3000px"></div>`);
    }
    if (url.pathname === '/tricky') {
      return html(`<p id="result">none</p>
        <button id="ask" onclick="alert('hello'); document.getElementById('result').textContent = String(confirm('Sure?'))">Ask</button>
        <div style="position:relative">
          <button id="under">Under</button>
          <div id="overlay" style="position:absolute;inset:0;width:200px;height:60px;background:#fff"></div>
        </div>`);
    }
    res.writeHead(404);
    res.end();
  });
}

function stepsStage(id: string, steps: StepAction[], extra: Partial<StageDefinition> = {}): StageDefinition {
  return {
    id,
    kind: 'steps',
    browser: { profile: 'site', headed: false, allowDomains: [] },
    steps,
    timeoutSeconds: 60,
    retries: 0,
    ...extra,
  } as StageDefinition;
}

/** Chromium browser processes (not helpers) this test's browser-host started. */
async function browserPids(hostId: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (argv.includes(`--stageflow-host=${hostId}`) && !argv.some((a) => a.startsWith('--type='))) found.push(Number(entry));
  }
  return found;
}

function stepLines(events: RunEvent[], stageId: string): string[] {
  return events
    .filter((e) => e.stageId === stageId && e.type === 'stage.log')
    .map((e) => (e as RunEvent<'stage.log'>).data.line);
}

describe('steps stages (runner + browser-host + Chromium)', () => {
  let h: Harness;
  let host: ChildProcess;
  let site: Server;
  let siteUrl: string;
  let root: string;
  let hostId: string;
  let leases: ProfileLeases;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sf-steps-'));
    const home = join(root, 'home');
    await mkdir(home, { recursive: true, mode: 0o700 });
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
    site = loginSite();
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
    for (const pid of await browserPids(hostId)) {
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

  it('logs in with built-in steps, extracts the account, stores a PNG, and the next stage of the run is logged in', async () => {
    const pipeline = pipelineOf(
      [
        stepsStage('login', [
          { action: 'goto', url: `${siteUrl}/login` },
          { action: 'fill', selector: '#user', value: 'demo' },
          { action: 'fill', selector: '#password', value: 'demo-password' },
          { action: 'click', selector: '#sign-in' },
          { action: 'wait_for', condition: 'url', value: '*/account' },
          { action: 'wait_for', condition: 'text', value: 'Welcome back' },
          { action: 'extract', field: 'account', selector: '#account-name' },
          { action: 'extract', field: 'profile', selector: 'a.profile', attribute: 'href' },
          { action: 'screenshot', name: 'account.png', fullPage: true },
        ], {
          outputSchema: {
            type: 'object',
            properties: { account: { type: 'string' }, profile: { type: 'string' } },
            required: ['account', 'profile'],
            additionalProperties: false,
          },
        }),
        // Same run, same profile: the run's shared browser, so the session cookie is there.
        stepsStage('orders', [
          { action: 'goto', url: `${siteUrl}/account` },
          { action: 'wait_for', condition: 'selector', value: '#account-name' },
          { action: 'extract', field: 'still', selector: '#account-name' },
          { action: 'press', key: 'Tab' },
        ]),
      ],
      [{ from: 'login', to: 'orders' }],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 120_000);
    const byId = Object.fromEntries(run.stages.map((s) => [s.id, s]));

    expect({ state: run.state, reason: run.reason, tails: run.stages.map((s) => s.logTail) }).toMatchObject({ state: 'success' });
    expect(byId['login'].envelope).toMatchObject({
      ok: true,
      output: { account: 'Demo User', profile: '/users/demo' },
      artifacts: ['account.png'],
    });
    expect(byId['orders'].envelope?.output).toEqual({ still: 'Demo User' });

    // The screenshot is a PNG in the store, listed under the run, as tall as the whole page.
    const store = new ArtifactStore({ root: h.config.artifactsRoot });
    expect(await store.list(started.id)).toEqual([
      expect.objectContaining({ stageId: 'login', attempt: 1, name: 'account.png', contentType: 'image/png' }),
    ]);
    const png = await readFile(join(h.config.artifactsRoot, started.id, 'login', '1', 'account.png'));
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    // IHDR height (bytes 20..24): a full-page capture is taller than the 3000 px spacer.
    expect(png.readUInt32BE(20)).toBeGreaterThan(3000);

    // One log line per step, and no fill value anywhere in the run's history.
    const events = await allEvents(h.runs, started.id);
    const lines = stepLines(events, 'login');
    expect(lines).toHaveLength(9);
    expect(lines[3]).toMatch(/^step 4\/9 click "#sign-in": ok \(\d+ ms\)$/);
    expect(JSON.stringify([run, events])).not.toContain('demo-password');

    await waitFor('browser-host to release the lease of the ended run', async () => !(await leases.describe('local', 'site')).holder);
  });

  it('fails the stage at the first step that cannot be done, with the step, its action and why', async () => {
    const pipeline = pipelineOf(
      [
        stepsStage('broken', [
          { action: 'goto', url: `${siteUrl}/login` },
          { action: 'click', selector: '#no-such-button', timeoutSeconds: 2 },
          { action: 'screenshot', name: 'never.png', fullPage: false },
        ]),
      ],
      [],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 60_000);
    const stage = run.stages[0];
    expect(run.state).toBe('failed');
    expect(stage.state).toBe('failed');
    expect(stage.reason).toBe('step 2 (click "#no-such-button"): no element matches the selector after 2 s');
    expect(stage.envelope).toMatchObject({ ok: false, artifacts: [], error: stage.reason });
    expect(stage.logTail).toEqual([
      expect.stringMatching(/^step 1\/3 goto "http:\/\/127\.0\.0\.1:\d+\/login": ok/),
      'step 2/3 click "#no-such-button": failed: no element matches the selector after 2 s',
    ]);
  });

  it('answers page dialogs so the tab never blocks, and explains covered elements, bad selectors and non-fields', async () => {
    const throwaway = { headed: false, allowDomains: [] };
    const runOne = async (steps: StepAction[]) => {
      const started = await h.runs.startRun({ pipeline: pipelineOf([stepsStage('tricky', steps, { browser: throwaway })], []), input: {} });
      return (await waitForRun(h.runs, started.id, 'ended', 60_000)).stages[0];
    };
    const open: StepAction = { action: 'goto', url: `${siteUrl}/tricky` };

    const dialogs = await runOne([
      open,
      { action: 'click', selector: '#ask' },
      { action: 'wait_for', condition: 'text', value: 'false' },
      { action: 'extract', field: 'answer', selector: '#result' },
    ]);
    expect(dialogs.envelope?.output).toEqual({ answer: 'false' });
    expect(dialogs.logTail).toEqual(
      expect.arrayContaining(['the page opened an alert dialog; accepted it', 'the page opened a confirm dialog; dismissed it']),
    );

    // 3 s: in 1 s a loaded CI machine's page once answered no probe at all ("the page did not answer").
    const covered = await runOne([open, { action: 'click', selector: '#under', timeoutSeconds: 3 }]);
    expect(covered.reason).toBe('step 2 (click "#under"): the element is covered by another element (div#overlay) after 3 s');

    const badSelector = await runOne([open, { action: 'click', selector: 'div[', timeoutSeconds: 30 }]);
    expect(badSelector.reason).toMatch(/^step 2 \(click "div\["\): the selector is not valid CSS: .*div\[/);
    expect(badSelector.envelope?.durationMs).toBeLessThan(20_000);

    const notAField = await runOne([open, { action: 'fill', selector: '#under', value: 'x' }]);
    expect(notAField.reason).toBe(
      'step 2 (fill "#under"): the element is not a text field (an input, textarea or contenteditable element) but button#under',
    );
  });

  it('stops a steps stage that outlives its timeout as timed out, keeping the screenshots it took', async () => {
    const pipeline = pipelineOf(
      [
        stepsStage(
          'slow',
          [
            { action: 'goto', url: `${siteUrl}/login` },
            { action: 'screenshot', name: 'login.png', fullPage: false },
            { action: 'wait_for', condition: 'text', value: 'this never shows', timeoutSeconds: 3 },
          ],
          { timeoutSeconds: 3 },
        ),
      ],
      [],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 60_000);
    const stage = run.stages[0];
    expect(stage.state).toBe('timed_out');
    expect(stage.reason).toBe('timed out after 3 s');
    expect(stage.envelope?.artifacts).toEqual(['login.png']);
    expect(stage.logTail.at(-1)).toBe('step 3/3 wait_for text "this never shows": stopped');
  });
});
