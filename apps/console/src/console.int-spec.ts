import { LIVE_VIEW_CLOSE_CODES, RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix, waitFor as poll } from '@stageflow/testing';
import Redis from 'ioredis';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import WebSocket from 'ws';

/**
 * The console in a real Chromium, served by a real api process, with a real
 * runner, browser-host (live view on) and live-view-relay, each its own process
 * on one STAGEFLOW_HOME and the integration Redis: what an operator does with it.
 */
jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '../../..');
const TOKEN = 'console-int-token-0123456789abcdef';
const CHROMIUM = '/usr/bin/chromium';
const AGENT_BROWSER = join(ROOT, 'node_modules/.bin/agent-browser');
/**
 * The relay's `browser.dialog_timeout_seconds` for the whole stack (read at its boot). Short enough
 * that the time-out test waits little; long enough that every other dialog here, answered at once
 * by the test, is answered long before it even on a loaded machine.
 */
const DIALOG_TIMEOUT_SECONDS = 20;

/** A build stage that logs, waits a moment (so its running state can be seen) and writes an output. */
const DEMO = `name: console-demo
stages:
  - id: build
    command: |
      echo "building 1.2.3"
      echo '<img src=x onerror="window.__pwned=1">'
      sleep "$(cat "$STAGEFLOW_INPUT" | sed -n 's/.*"sleep": *\\([0-9]*\\).*/\\1/p')"
      echo "built"
      echo '{"version":"1.2.3","note":"<b>bold</b>"}' > "$STAGEFLOW_OUTPUT"
  - id: approve
    message: "Ship <b>1.2.3</b>?"
  - id: ship
    command: echo shipped
edges:
  - from: build
    to: approve
  - from: approve
    to: ship
`;

/** A human login gate on the test's site: signed in once the popup "provider" set the `sid` cookie. */
const login = (site: string) => `name: console-login
stages:
  - id: login
    kind: gate
    message: "Log in to the demo site, then accept."
    verify: browser_login
    browser:
      profile: console-login
      login_url: ${site}/login
      check:
        url: ${site}/account
        logged_out_url: "*/login*"
        cookie: sid
`;

/** A browser stage that shows a page and runs until the test lets it finish (the page polls the site). */
const watch = (site: string) => `name: console-watch
stages:
  - id: work
    kind: steps
    timeout_seconds: 200
    browser:
      headed: false
    steps:
      - goto: ${site}/watch
      - wait_for: { selector: "#done", timeout_seconds: 180 }
`;

/** A human login gate on the site's dialogs page, on a profile of its own: the page dialog tests answer (or not) its dialogs. */
const dialogs = (site: string) => `name: console-dialogs
stages:
  - id: login
    kind: gate
    message: "Answer the page's dialogs."
    verify: browser_login
    browser:
      profile: console-dialogs
      login_url: ${site}/dialogs
      check:
        url: ${site}/account
        logged_out_url: "*/login*"
        cookie: sid
`;

/**
 * A run stage with a browser whose command opens the site's page with agent-browser and then
 * runs on, so the stage is running (Watch browser) and nothing answers the page's dialogs:
 * a steps stage answers them itself (docs/yaml-catalog.md), and a login gate offers no Watch
 * browser (its stage waits). The test cancels the run.
 */
const watchDialog = (site: string) => `name: console-watch-dialog
stages:
  - id: agent
    timeout_seconds: 200
    command: |
      '${AGENT_BROWSER}' open ${site}/watch-dialog > /dev/null && sleep 190
    browser:
      headed: false
`;

/**
 * The pages the Host's browser shows. They report what happens in them to this
 * server (`/report`), so the test sees the real page change without reaching into
 * the browser. Laid out in percentages: a point is the same fraction of the
 * picture whatever the Host's viewport is.
 */
const PAGES: Record<string, string> = {
  '/login': `<!doctype html><title>login</title><body style="margin:0;font:16px sans-serif">
    <input id="user" style="position:absolute;left:5%;top:5%;width:40%;height:10%;font-size:20px">
    <button id="ask" style="position:absolute;left:5%;top:20%;width:40%;height:10%">Stay signed in?</button>
    <button id="idp" style="position:absolute;left:5%;top:35%;width:40%;height:10%">Sign in with the provider</button>
    <div id="target" style="position:absolute;left:55%;top:5%;width:40%;height:20%;background:#ccd">double click here</div>
    <script>
      const report = (what) => fetch('/report', { method: 'POST', body: JSON.stringify(what) });
      report({ loaded: location.pathname });
      document.getElementById('user').addEventListener('input', (e) => report({ user: e.target.value }));
      const target = document.getElementById('target');
      for (const type of ['click', 'dblclick', 'contextmenu']) target.addEventListener(type, (e) => { e.preventDefault(); report({ event: type }); });
      document.getElementById('ask').onclick = () => report({ confirm: confirm('Stay signed in as <b>ada</b>?') });
      document.getElementById('idp').onclick = () => window.open('/idp', 'idp', 'width=500,height=400');
      window.addEventListener('message', (e) => { document.cookie = 'sid=1; Max-Age=3600; Path=/'; report({ provider: e.data }); });
    </script></body>`,
  '/idp': `<!doctype html><title>provider</title><body style="margin:0">
    <button style="position:absolute;left:0;top:0;width:100%;height:100%;font-size:30px" onclick="window.opener.postMessage('ada', '*'); window.close()">Continue as Ada</button></body>`,
  '/dialogs': `<!doctype html><title>dialogs</title><body style="margin:0;font:16px sans-serif">
    <button id="ask-confirm" style="position:absolute;left:5%;top:5%;width:40%;height:10%">confirm</button>
    <button id="ask-prompt" style="position:absolute;left:5%;top:20%;width:40%;height:10%">prompt</button>
    <button id="ask-alert" style="position:absolute;left:5%;top:35%;width:40%;height:10%">alert</button>
    <p id="tick" style="position:absolute;left:55%;top:5%;font-size:40px">0</p>
    <script>
      const report = (what) => fetch('/report', { method: 'POST', body: JSON.stringify(what) });
      report({ loaded: location.pathname });
      // Ticks (repaints, so pictures come) whenever no dialog blocks the page.
      let n = 0;
      setInterval(() => (document.getElementById('tick').textContent = String(++n)), 500);
      document.getElementById('ask-confirm').onclick = () => report({ confirm: confirm('Nobody answers <b>this</b>?') });
      document.getElementById('ask-prompt').onclick = () => report({ prompt: prompt('Your <i>name</i>?', 'Ada <Lovelace>') });
      document.getElementById('ask-alert').onclick = () => { alert('Saved <b>1</b> item'); report({ alerted: true }); };
    </script></body>`,
  '/watch-dialog': `<!doctype html><title>watch dialog</title><body style="margin:0;font:40px sans-serif"><p id="tick">0</p>
    <script>
      const report = (what) => fetch('/report', { method: 'POST', body: JSON.stringify(what) });
      report({ loaded: location.pathname });
      let n = 0;
      let asked = false;
      setInterval(async () => {
        document.getElementById('tick').textContent = String(++n);
        if (!asked && (await (await fetch('/dialog-state')).text()) === 'ask') {
          asked = true;
          report({ watchConfirm: confirm('Deploy <b>x</b>?') });
        }
      }, 250);
    </script></body>`,
  '/watch': `<!doctype html><title>watch</title><body style="margin:0;font:40px sans-serif"><p id="tick">0</p>
    <script>
      let n = 0;
      setInterval(async () => {
        document.getElementById('tick').textContent = String(++n);
        if ((await (await fetch('/watch-state')).text()) === 'done' && !document.getElementById('done')) {
          document.body.insertAdjacentHTML('beforeend', '<p id="done">done</p>');
        }
      }, 250);
    </script></body>`,
};

interface Site {
  url: string;
  reports: Array<Record<string, unknown>>;
  finishWatch(): void;
  /** The watch-dialog page opens its confirm() at its next look. */
  askWatchDialog(): void;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const reports: Array<Record<string, unknown>> = [];
  let watchDone = false;
  let watchDialogAsked = false;
  const server: Server = createHttpServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/report') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += String(chunk)));
      req.on('end', () => {
        reports.push(JSON.parse(body) as Record<string, unknown>);
        res.end();
      });
      return;
    }
    if (path === '/watch-state') return void res.end(watchDone ? 'done' : 'wait');
    if (path === '/dialog-state') return void res.end(watchDialogAsked ? 'ask' : 'wait');
    if (path === '/account') {
      if (!/(^|;\s*)sid=1/.test(req.headers.cookie ?? '')) {
        res.writeHead(302, { location: '/login' });
        return void res.end();
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      return void res.end('<!doctype html><title>account</title><p id="account">ada</p>');
    }
    const page = PAGES[path];
    res.statusCode = page ? 200 : 404;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page ?? '<title>404</title>');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reports,
    finishWatch: () => (watchDone = true),
    askWatchDialog: () => (watchDialogAsked = true),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/** Polls (`@stageflow/testing`), with the console test's default time. */
function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  return poll(what, check, timeoutMs);
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill('SIGTERM');
  });
}

/** The JSON messages the console sent on its live-view sockets, as the browser put them on the wire. */
interface SentLog {
  messages: Array<Record<string, unknown>>;
  /** The relay's JSON messages to the console (pictures left out): what a failure message shows. */
  received: Array<Record<string, unknown>>;
  sockets: Array<{ url: string; closed: boolean }>;
  of(type: string, action?: string): Array<Record<string, unknown>>;
}

function recordLiveViewSockets(page: Page): SentLog {
  const log: SentLog = {
    messages: [],
    received: [],
    sockets: [],
    of: (type, action) => log.messages.filter((m) => m['type'] === type && (action === undefined || m['action'] === action)),
  };
  page.on('websocket', (ws) => {
    if (!ws.url().includes('/live-view?ticket=')) return;
    const entry = { url: ws.url(), closed: false };
    log.sockets.push(entry);
    ws.on('framesent', (frame) => log.messages.push(JSON.parse(String(frame.payload)) as Record<string, unknown>));
    ws.on('framereceived', (frame) => {
      if (typeof frame.payload === 'string') log.received.push(JSON.parse(frame.payload) as Record<string, unknown>);
    });
    ws.on('close', () => (entry.closed = true));
  });
  return log;
}

/** A point of the picture, as fractions, in the canvas's own coordinates (what a person clicks). */
async function at(canvas: Locator, fx: number, fy: number): Promise<{ x: number; y: number }> {
  const box = await canvas.boundingBox();
  if (!box) throw new Error('the live view canvas is not shown');
  return { x: box.width * fx, y: box.height * fy };
}

describe('the console in a browser', () => {
  const prefix = uniquePrefix('sft-console');
  const dir = mkdtempSync(join(tmpdir(), 'sf-console-it-'));
  const consoleDir = join(dir, 'console');
  const home = join(dir, 'home');
  let apiPort: number;
  let api: ChildProcess | undefined;
  const services: ChildProcess[] = [];
  const hostId = `it-console-${process.pid}`;
  const runtimeDir = `/tmp/sfc-${process.pid}`;
  let site: Site;
  let browser: Browser;
  let page: Page;
  let base: string;
  let pageErrors: string[] = [];

  /** A fresh tab; `signedIn` puts the token where the console keeps it, as the token form would. */
  const openPage = async (signedIn: boolean) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    if (signedIn) await context.addInitScript((token) => sessionStorage.setItem('stageflow.apiToken', token), TOKEN);
    page = await context.newPage();
    pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
  };

  /** One service's environment: the same Redis, prefix, home and host id for all, as in one stack. */
  const serviceEnv = (extra: Record<string, string>) => ({
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: process.env['HOME'] ?? dir,
    SWC_NODE_PROJECT: 'tsconfig.base.json',
    STAGEFLOW_REDIS_URL: testRedisUrl(),
    STAGEFLOW_REDIS_PREFIX: prefix,
    STAGEFLOW_HOME: home,
    STAGEFLOW_HOST_ID: hostId,
    STAGEFLOW_LOG_LEVEL: 'warn',
    ...extra,
  });

  const spawnService = async (app: string, env: Record<string, string>, healthUrl: string) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', `apps/${app}/src/main.ts`], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
    const exited = new Promise<never>((_, fail) => child.once('exit', (code) => fail(new Error(`${app} exited (${code}) before it answered ${healthUrl}`))));
    exited.catch(() => undefined);
    await Promise.race([waitFor(`${app} to answer ${healthUrl}`, async () => (await fetch(healthUrl)).status === 200, 120_000), exited]);
    return child;
  };

  let relayPort: number;
  let browserHostUrl: string;
  const startApi = async () => {
    api = await spawnService(
      'api',
      serviceEnv({
        STAGEFLOW_API_PORT: String(apiPort),
        STAGEFLOW_API_TOKEN: TOKEN,
        STAGEFLOW_CONSOLE_DIR: consoleDir,
        STAGEFLOW_LIVE_VIEW_URL: `http://127.0.0.1:${relayPort}`,
        // Profile deletes and Check now go through browser-host.
        STAGEFLOW_BROWSER_HOST_URL: browserHostUrl,
      }),
      `${base}/api/health`,
    );
  };

  const rest = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };
  const startRun = async (pipeline: string, input: unknown = {}) => (await rest<{ id: string }>('POST', '/api/runs', { pipeline, input })).id;
  const stageState = (runId: string, stageId: string) => page.locator(`[data-testid=stage-graph] [data-stage="${stageId}"]`).getAttribute('data-state');

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'apps/console/build.cjs'), '--outdir', consoleDir], { stdio: 'pipe' });
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'config.yaml'), `browser:\n  dialog_timeout_seconds: ${DIALOG_TIMEOUT_SECONDS}\n`);
    site = await startSite();
    apiPort = await freePort();
    relayPort = await freePort();
    base = `http://127.0.0.1:${apiPort}`;
    // One at a time: several TypeScript boots at once starve a small machine.
    // browser-host: no screen here, but this stack serves the live view (STAGEFLOW_LIVE_VIEW).
    const browserHostPort = await freePort();
    browserHostUrl = `http://127.0.0.1:${browserHostPort}`;
    services.push(
      await spawnService(
        'browser-host',
        serviceEnv({
          STAGEFLOW_BROWSER_TMP: dir,
          // Short: agent-browser's unix socket paths live under it.
          STAGEFLOW_BROWSER_RUNTIME_DIR: runtimeDir,
          STAGEFLOW_BROWSER_HOST_PORT: String(browserHostPort),
          STAGEFLOW_LIVE_VIEW: 'true',
        }),
        `${browserHostUrl}/health`,
      ),
    );
    services.push(
      await spawnService(
        'live-view-relay',
        serviceEnv({ STAGEFLOW_RELAY_PORT: String(relayPort), STAGEFLOW_BROWSER_HOST_URL: browserHostUrl }),
        `http://127.0.0.1:${relayPort}/health`,
      ),
    );
    const runnerPort = await freePort();
    services.push(
      await spawnService(
        'runner',
        serviceEnv({
          STAGEFLOW_WORK_DIR: join(dir, 'work'),
          STAGEFLOW_RUNNER_HEALTH_PORT: String(runnerPort),
          STAGEFLOW_BROWSER_HOST_URL: browserHostUrl,
        }),
        `http://127.0.0.1:${runnerPort}/health`,
      ),
    );
    await startApi();
    for (const yaml of [DEMO, login(site.url), watch(site.url), dialogs(site.url), watchDialog(site.url)]) {
      const res = await fetch(`${base}/api/pipelines`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'text/yaml' }, body: yaml });
      expect({ status: res.status, body: res.status === 201 ? '' : await res.text() }).toEqual({ status: 201, body: '' });
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // No update checks, field trials or first-run work: this network is closed and the test must not wait on it.
      args: ['--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  }, 300_000);

  beforeEach(() => openPage(true));
  afterEach(() => page?.context().close());

  afterAll(async () => {
    await browser?.close();
    await stop(api);
    for (const service of services.reverse()) await stop(service);
    // Any Chromium the browser stages left (their runs end in the tests; this is the backstop).
    for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(`--stageflow-host=${hostId}`)) process.kill(Number(entry), 'SIGKILL');
      } catch {
        // gone
      }
    }
    await site?.close();
    const redis = new Redis(testRedisUrl());
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  it('is served by the api: index.html at / and for client routes, hashed assets, /api untouched', async () => {
    const index = await (await fetch(`${base}/`)).text();
    expect(index).toMatch(/<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>/);
    for (const route of ['/runs/x', '/profiles', '/audit?type=profile_used']) {
      const res = await fetch(`${base}${route}`);
      expect({ route, status: res.status, body: await res.text() }).toEqual({ route, status: 200, body: index });
    }
    const script = readdirSync(join(consoleDir, 'assets')).find((f) => f.endsWith('.js')) as string;
    const asset = await fetch(`${base}/assets/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${base}/assets/missing-ABCDEFGH.js`)).status).toBe(404);
    expect(await (await fetch(`${base}/api/health`)).json()).toEqual({ status: 'ok' });
    // The console's files need no token; the api behind them does.
    expect((await fetch(`${base}/api/runs`)).status).toBe(401);
  });

  it('asks for the token, then shows a run appear live, its stages change, a gate accepted and the run finish', async () => {
    await page.context().close();
    await openPage(false);
    await page.goto(`${base}/`);
    await page.getByTestId('token-form').waitFor();
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByTestId('runs-table').waitFor();
    await page.getByTestId('socket-status').filter({ hasText: 'live' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('stageflow.apiToken'))).toBe(TOKEN);

    // Started elsewhere (curl, another tab): the row appears without a reload.
    const runId = await startRun('console-demo', { sleep: 4 });
    const row = page.locator(`tr[data-run="${runId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('console-demo');

    await row.getByRole('link', { name: runId }).click();
    await page.waitForURL(`${base}/runs/${runId}`);
    await page.getByTestId('stage-graph').waitFor();
    await waitFor('build to run', async () => (await stageState(runId, 'build')) === 'running');
    const buildLog = page.locator('[data-stage="build"] [data-testid=stage-log]');
    await buildLog.filter({ hasText: 'building 1.2.3' }).waitFor();

    // The api goes away while the stage runs on; the page reconnects and resumes after the last seq it had.
    await page.evaluate(() => ((window as unknown as { __samePage: boolean }).__samePage = true));
    await stop(api);
    await page.getByTestId('socket-status').filter({ hasText: 'reconnecting' }).waitFor();
    const keys = new RedisKeys(prefix);
    const redis = new Redis(testRedisUrl());
    try {
      await waitFor('build to end while the api is down', async () => (await redis.hget(keys.stage(runId, 'build'), 'state')) === 'success');
    } finally {
      redis.disconnect();
    }
    await startApi();
    await page.getByTestId('socket-status').filter({ hasText: 'live' }).waitFor({ timeout: 30_000 });
    await waitFor('build to show success', async () => (await stageState(runId, 'build')) === 'success');
    await waitFor('approve to wait', async () => (await stageState(runId, 'approve')) === 'waiting');
    expect(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
    // Every line once, in order, including those logged while the api was down.
    expect((await buildLog.textContent())?.trim().split('\n')).toEqual(['building 1.2.3', '<img src=x onerror="window.__pwned=1">', 'built']);

    // Text from stages is text: no element was made from it, no handler ran.
    expect(await buildLog.locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.locator('[data-stage="build"] details.envelope summary').click();
    expect(await page.locator('[data-stage="build"] [data-testid=envelope-output]').textContent()).toContain('"note": "<b>bold</b>"');
    await page.getByTestId('no-artifacts').or(page.getByText('does not list artifacts yet')).first().waitFor();

    const gate = page.locator('[data-testid=gate][data-gate="approve"]');
    expect(await gate.locator('.gate-message').textContent()).toBe('Ship <b>1.2.3</b>?');
    await gate.getByLabel('Note (optional)').fill('looks right');
    await gate.getByRole('button', { name: 'Accept' }).click();

    await waitFor('ship to succeed', async () => (await stageState(runId, 'ship')) === 'success');
    await page.locator('.run-page[data-state="success"]').waitFor();
    await gate.waitFor({ state: 'detached' });
    expect(await page.locator('[data-stage="approve"] .gate-answer').textContent()).toBe('Accepted: looks right');
    expect(await page.locator('[data-stage="ship"] [data-testid=stage-log]').textContent()).toContain('shipped');

    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.locator(`tr[data-run="${runId}"][data-state="success"]`).waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('starts a login run from the form; its gate shows the line, the live view of the Host\'s browser, the tip and reopen; cancelling ends the view', async () => {
    const sent = recordLiveViewSockets(page);
    await page.goto(`${base}/`);
    const form = page.getByTestId('start-run');
    await form.getByLabel('Pipeline').selectOption('console-login');
    await form.getByLabel('Run input (JSON)').fill('{"ticket": 7');
    await form.getByRole('button', { name: 'Start run' }).click();
    await form.getByRole('alert').filter({ hasText: 'The input is not JSON' }).waitFor();
    await form.getByLabel('Run input (JSON)').fill('{"ticket": 7}');
    await form.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/runs\/[A-Za-z0-9_-]+$/);
    const runId = new URL(page.url()).pathname.split('/').pop() as string;
    try {
      expect(await rest<{ input: unknown; pipeline: string }>('GET', `/api/runs/${runId}`)).toMatchObject({ pipeline: 'console-login', input: { ticket: 7 } });
      const gate = page.locator('[data-testid=gate][data-gate="login"]');
      await gate.waitFor({ timeout: 60_000 });
      expect(await gate.locator('.login-line').textContent()).toBe('Log in in the browser view below, then confirm.');
      const view = gate.getByTestId('live-view');
      // The real relay: a picture of the Host's tab at the login page, its address, the interactive status.
      await gate.locator('[data-testid=live-view-canvas][data-frames]').waitFor({ timeout: 60_000 });
      expect(await view.getByTestId('live-view-url').textContent()).toBe(`${site.url}/login`);
      expect(await view.getByTestId('live-view-status').textContent()).toBe('Live: click the picture to focus it, then type.');
      expect(await view.locator('.tip').textContent()).toContain('Native browser prompts are not drawn in the picture');
      expect(await view.getByText('Page seems stuck?').count()).toBe(1);

      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await page.locator('.run-page[data-state="cancelled"]').waitFor();
      // The relay ends the view with its own words (the stage or the run ended) and closes the socket; or the gate
      // panel goes first. Either way nothing of the view is left taking input.
      await waitFor('the live-view socket to close', async () => sent.sockets.length === 1 && sent.sockets[0].closed);
      await gate.waitFor({ state: 'detached' });
    } finally {
      await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
    }
    expect(pageErrors).toEqual([]);
  });

  it('drives a login gate through the real relay: clicks, keys, paste, a double click, a confirm, a popup, reopen, then Accept closes the view and the login holds', async () => {
    const sent = recordLiveViewSockets(page);
    const tickets: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/live-view/tickets')) tickets.push({ path: new URL(request.url()).pathname, body: request.postDataJSON() });
    });
    const reportsFrom = site.reports.length;
    const reports = () => site.reports.slice(reportsFrom);
    /** Waits until the page reported what `check` looks for. */
    const reported = (what: string, check: () => Promise<boolean>) =>
      waitFor(what, check).catch((error: Error) => {
        throw new Error(
          `${error.message}; the page reported ${JSON.stringify(reports())}; the console sent ${JSON.stringify(sent.messages)}; the relay said ${JSON.stringify(sent.received)}`,
        );
      });
    const runId = await startRun('console-login');
    try {
      await page.goto(`${base}/runs/${runId}`);
      const gate = page.locator('[data-testid=gate][data-gate="login"]');
      // The previous test's run may still hold the profile for a moment.
      await gate.waitFor({ timeout: 90_000 });
      const view = gate.getByTestId('live-view');
      const canvas = view.getByTestId('live-view-canvas');
      await gate.locator('[data-testid=live-view-canvas][data-frames]').waitFor({ timeout: 60_000 });
      expect(tickets).toEqual([{ path: `/api/runs/${runId}/stages/login/live-view/tickets`, body: { mode: 'interactive' } }]);
      expect(sent.sockets.map((s) => new URL(s.url).pathname)).toEqual([`/api/runs/${runId}/stages/login/live-view`]);
      await reported('the login page to load', async () => reports().some((r) => r['loaded'] === '/login'));

      // Click the user field (a fraction of the picture), type, correct, paste: the real page's field changes.
      await canvas.click({ position: await at(canvas, 0.25, 0.1) });
      await page.keyboard.type('adx');
      await page.keyboard.press('Backspace');
      await page.keyboard.type('a');
      await canvas.evaluate((c) => {
        const data = new DataTransfer();
        data.setData('text/plain', ' lovelace');
        c.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      });
      await reported('the typing and the paste to land in the page', async () => reports().some((r) => r['user'] === 'ada lovelace'));
      const click = sent.of('mouse', 'click')[0];
      expect(click).toEqual({ type: 'mouse', action: 'click', x: expect.any(Number), y: expect.any(Number) });
      expect(Math.abs((click['x'] as number) - 0.25)).toBeLessThan(0.01);
      expect(Math.abs((click['y'] as number) - 0.1)).toBeLessThan(0.01);
      expect(sent.of('key').map((m) => m['key'])).toEqual(['a', 'd', 'x', 'Backspace', 'a']);
      expect(sent.of('text')).toEqual([{ type: 'text', text: ' lovelace' }]);
      // Tab went to the page in the picture, not to the next control of the console.
      await page.keyboard.press('Shift+Tab');
      await waitFor('Shift+Tab to reach the relay', async () => sent.of('key').some((m) => m['key'] === 'Tab'));
      expect(sent.of('key').at(-1)).toEqual({ type: 'key', action: 'press', key: 'Tab', modifiers: ['Shift'] });
      expect(await canvas.evaluate((c) => document.activeElement === c)).toBe(true);

      // A double click reaches the page as a person's: two clicks and one dblclick; then a right click.
      const events = () => reports().filter((r) => r['event']).map((r) => r['event']);
      await canvas.dblclick({ position: await at(canvas, 0.75, 0.15) });
      await reported('the double click', async () => events().includes('dblclick'));
      await canvas.click({ position: await at(canvas, 0.75, 0.15), button: 'right' });
      await reported('the right click', async () => events().includes('contextmenu'));
      expect(events()).toEqual(['click', 'click', 'dblclick', 'contextmenu']);
      expect(sent.of('mouse', 'click').slice(1).map((m) => [m['clicks'], m['button']])).toEqual([
        [2, undefined],
        [undefined, 'right'],
      ]);

      // The page asks with confirm(): plain text over the last picture, answered with the overlay's button.
      await canvas.click({ position: await at(canvas, 0.25, 0.25) });
      const dialog = view.getByTestId('live-view-dialog');
      await dialog.waitFor();
      expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Stay signed in as <b>ada</b>?');
      expect(await dialog.locator('b').count()).toBe(0);
      expect(await dialog.getByTestId('live-view-dialog-input').count()).toBe(0);
      await dialog.getByTestId('live-view-dialog-accept').click();
      await reported('the page to get true from confirm()', async () => reports().some((r) => r['confirm'] === true));
      await dialog.waitFor({ state: 'hidden' });
      expect(sent.of('dialog')).toEqual([{ type: 'dialog', id: expect.any(Number), action: 'accept' }]);

      // "Sign in with the provider" opens a popup: the view follows it, its button answers the opener, the view returns.
      await canvas.click({ position: await at(canvas, 0.25, 0.4) });
      const popupLine = view.getByTestId('live-view-popup');
      await popupLine.filter({ hasText: `The view follows a popup the page opened (${site.url}/idp)` }).waitFor();
      await view.getByTestId('live-view-url').filter({ hasText: `${site.url}/idp` }).waitFor();
      // The relay takes input for the popup once it has a picture of it, and says `input_failed` before: as a person
      // would, click again then.
      let clicks = 0;
      let failuresSeen = 0;
      await reported('the opener to get the provider\'s answer', async () => {
        if (reports().some((r) => r['provider'] === 'ada')) return true;
        const failures = sent.received.filter((m) => m['type'] === 'error' && m['code'] === 'input_failed').length;
        if (clicks === 0 || (failures > failuresSeen && clicks < 5)) {
          failuresSeen = failures;
          clicks += 1;
          await canvas.click({ position: await at(canvas, 0.5, 0.5) });
        }
        return false;
      });
      await popupLine.waitFor({ state: 'hidden' });
      await view.getByTestId('live-view-notice').filter({ hasText: 'The popup closed: the view is back on the page that opened it.' }).waitFor();
      expect(await view.getByTestId('live-view-url').textContent()).toBe(`${site.url}/login`);

      // Page seems stuck? → Reopen browser tab: the same address in a fresh tab, which loads the page again.
      const loadsBefore = reports().filter((r) => r['loaded'] === '/login').length;
      await view.getByText('Page seems stuck?').click();
      await view.getByTestId('live-view-reopen').click();
      expect(sent.of('reopen')).toEqual([{ type: 'reopen' }]);
      expect(await view.getByTestId('live-view-reopen').isDisabled()).toBe(true);
      await view.getByTestId('live-view-notice').filter({ hasText: 'The view moved to a fresh tab of the same browser.' }).waitFor();
      await reported('the fresh tab to load the login page', async () => reports().filter((r) => r['loaded'] === '/login').length > loadsBefore);
      expect(sent.received.filter((m) => m['type'] === 'error' && String(m['code']).startsWith('reopen'))).toEqual([]);

      // Accept: the console closes the view at once and sends nothing more; the Host checks the login, which holds.
      await gate.getByTestId('gate-accept').click();
      // The panel says so until the gate's answer arrives as an event, which takes the whole panel away.
      // Read without Playwright's auto-wait: the panel may go between two looks.
      await waitFor('the view to close on Accept', async () => {
        const status = await page.evaluate(() => {
          const panel = document.querySelector('[data-testid=gate][data-gate="login"]');
          return panel ? (panel.querySelector('[data-testid=live-view-status]')?.textContent ?? '') : null;
        });
        return status === null || status.startsWith('The gate was accepted, so this live view is closed.');
      });
      await waitFor('the live-view socket to close', async () => sent.sockets[0].closed);
      // The socket is closed, so nothing typed now can reach the page; and no second view was opened.
      const count = sent.messages.length;
      await page.keyboard.type('z');
      if (await canvas.count()) await canvas.click({ position: { x: 5, y: 5 }, timeout: 5000 }).catch(() => undefined); // the panel may go meanwhile
      expect(sent.messages.length).toBe(count);
      await waitFor('the login stage to succeed', async () => (await stageState(runId, 'login')) === 'success', 60_000);
      await page.locator('.run-page[data-state="success"]').waitFor();
      expect(sent.sockets).toHaveLength(1);
    } finally {
      await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
    }
    expect(pageErrors).toEqual([]);
  });

  it('watches a running browser stage read-only: pictures, no input (the relay refuses it), and the view ends with the stage', async () => {
    const sent = recordLiveViewSockets(page);
    const runId = await startRun('console-watch');
    try {
      await page.goto(`${base}/runs/${runId}`);
      const card = page.locator('[data-stage="work"].stage');
      const watchButton = page.getByTestId('watch-browser-work');
      await watchButton.waitFor({ timeout: 60_000 });
      await waitFor('the stage to show its page', async () => {
        const res = await fetch(`${base}/api/runs/${runId}/stages/work/live-view/tickets`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ mode: 'view-only' }),
        });
        return res.status === 201;
      });
      await watchButton.click();
      const view = card.getByTestId('live-view');
      expect(await view.getAttribute('data-mode')).toBe('view-only');
      const canvas = view.getByTestId('live-view-canvas');
      await card.locator('[data-testid=live-view-canvas][data-frames]').waitFor({ timeout: 60_000 });
      await view.getByTestId('live-view-url').filter({ hasText: `${site.url}/watch` }).waitFor();
      expect(await view.getByTestId('live-view-status').textContent()).toBe('Live, read only: watching the stage’s browser.');
      // The page ticks: more pictures come.
      const frames = Number(await canvas.getAttribute('data-frames'));
      await waitFor('more pictures of the ticking page', async () => Number(await canvas.getAttribute('data-frames')) > frames);
      expect(await view.getByTestId('live-view-reopen').count()).toBe(0);

      // The console sends nothing for a view-only view, whatever the operator does.
      await canvas.click({ position: await at(canvas, 0.5, 0.5) });
      await page.keyboard.type('no');
      await canvas.dblclick({ position: await at(canvas, 0.5, 0.5) });
      expect(sent.messages).toEqual([]);

      // And the relay refuses input on a view-only socket: a client that sends some anyway.
      const { ticket, path } = await rest<{ ticket: string; path: string }>('POST', `/api/runs/${runId}/stages/work/live-view/tickets`, { mode: 'view-only' });
      const socket = new WebSocket(`ws://127.0.0.1:${apiPort}${path}?ticket=${ticket}`);
      const received: Array<Record<string, unknown>> = [];
      const closeCodes: number[] = [];
      socket.on('close', (code) => closeCodes.push(code));
      socket.on('message', (data, isBinary) => {
        if (!isBinary) received.push(JSON.parse(String(data)) as Record<string, unknown>);
      });
      try {
        await waitFor('ready on the direct socket', async () => received.some((m) => m['type'] === 'ready'));
        expect(received[0]).toMatchObject({ type: 'ready', mode: 'view-only', runId, stageId: 'work' });
        socket.send(JSON.stringify({ type: 'mouse', action: 'click', x: 0.5, y: 0.5 }));
        await waitFor('the relay to refuse the input', async () => received.some((m) => m['type'] === 'error'));
        expect(received.find((m) => m['type'] === 'error')).toMatchObject({ code: 'input_refused' });

        // The stage ends: the relay ends the view, and the console says so over the last picture.
        site.finishWatch();
        await view
          .getByTestId('live-view-status')
          .filter({ hasText: 'The stage has ended, so its live view is closed.' })
          .waitFor({ timeout: 60_000 })
          .catch(async (error: Error) => {
            const run = await rest<unknown>('GET', `/api/runs/${runId}`);
            throw new Error(`${error.message}; the run is ${JSON.stringify(run)}; the relay said ${JSON.stringify(sent.received)}; directly ${JSON.stringify(received)}`);
          });
        expect(await view.getAttribute('data-phase')).toBe('ended');
        await waitFor('the stage to succeed', async () => (await stageState(runId, 'work')) === 'success');
        await waitFor('the console\'s socket to close', async () => sent.sockets.length === 1 && sent.sockets[0].closed);
        // The relay ends every view of the stage with stage-ended, also when browser-host's closing of the
        // stage's tab reaches it first (it waits for the stage's end to say why: docs/live-view.md).
        await waitFor('the direct socket to close', async () => socket.readyState === WebSocket.CLOSED);
        expect(closeCodes).toEqual([LIVE_VIEW_CLOSE_CODES.ended]);
        expect(received.find((m) => m['type'] === 'ended')?.['reason']).toBe('stage-ended');
      } finally {
        socket.terminate();
      }
      expect(sent.messages).toEqual([]);
      // The ended view stays until the operator closes it; then the stage, no longer running, offers no Watch browser.
      expect(await watchButton.textContent()).toBe('Stop watching');
      await watchButton.click();
      await view.waitFor({ state: 'detached' });
      await watchButton.waitFor({ state: 'hidden' });
    } finally {
      site.finishWatch();
      await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
    }
    expect(pageErrors).toEqual([]);
  });

  describe('page dialogs over the live view', () => {
    /** What the site's pages reported since `from`, and a wait on them whose failure says what the page, console and relay did. */
    const pageReports = (from: number, sent: SentLog) => {
      const reports = () => site.reports.slice(from);
      const reported = (what: string, check: (reports: Array<Record<string, unknown>>) => boolean, timeoutMs?: number) =>
        waitFor(what, async () => check(reports()), timeoutMs).catch((error: Error) => {
          throw new Error(
            `${error.message}; the page reported ${JSON.stringify(reports())}; the console sent ${JSON.stringify(sent.messages)}; the relay said ${JSON.stringify(sent.received)}`,
          );
        });
      return { reports, reported };
    };

    /** The dialogs run's login gate, its live view showing the dialogs page. */
    const openDialogsGate = async (runId: string) => {
      const sent = recordLiveViewSockets(page);
      const { reports, reported } = pageReports(site.reports.length, sent);
      await page.goto(`${base}/runs/${runId}`);
      const gate = page.locator('[data-testid=gate][data-gate="login"]');
      // The previous test's run may still hold the profile for a moment.
      await gate.waitFor({ timeout: 90_000 });
      const view = gate.getByTestId('live-view');
      await gate.locator('[data-testid=live-view-canvas][data-frames]').waitFor({ timeout: 60_000 });
      await reported('the dialogs page to load', (r) => r.some((x) => x['loaded'] === '/dialogs'));
      return { sent, reports, reported, gate, view, canvas: view.getByTestId('live-view-canvas'), dialog: view.getByTestId('live-view-dialog') };
    };

    const frames = async (canvas: Locator) => Number(await canvas.getAttribute('data-frames'));

    it('dismisses a confirm nobody answers after dialog_timeout_seconds: the overlay says so, the page gets false, the stage waits on and the view goes on', async () => {
      const runId = await startRun('console-dialogs');
      try {
        const { sent, reported, gate, view, canvas, dialog } = await openDialogsGate(runId);
        await canvas.click({ position: await at(canvas, 0.25, 0.1) });
        await dialog.waitFor();
        expect(await dialog.getAttribute('data-kind')).toBe('confirm');
        expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Nobody answers <b>this</b>?');
        expect(await dialog.getByText(/^If nobody answers, the Host dismisses it at /).count()).toBe(1);
        const opened = sent.received.find((m) => m['type'] === 'dialog' && m['kind'] === 'confirm');
        expect(opened).toMatchObject({ canAnswer: true, waitsFor: 'operator', autoAccepted: false, timeoutAt: expect.any(String) });

        // Nobody answers. The notice shows for a few seconds: read it and the overlay in one look.
        const after = await waitFor(
          'the time-out notice',
          () =>
            view.evaluate((v) => {
              const notice = v.querySelector<HTMLElement>('[data-testid=live-view-notice]');
              const overlay = v.querySelector<HTMLElement>('[data-testid=live-view-dialog]');
              return notice && !notice.hidden ? { notice: notice.textContent, overlayHidden: overlay?.hidden } : undefined;
            }),
          DIALOG_TIMEOUT_SECONDS * 1000 + 30_000,
        );
        expect(after).toEqual({ notice: 'The page dialog was dismissed after waiting too long.', overlayHidden: true });
        expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(String(opened?.['timeoutAt'])) - 1000);
        expect(sent.received.find((m) => m['type'] === 'dialog-closed')).toMatchObject({ id: opened?.['id'], outcome: 'timed-out' });
        await reported('the page to get false from confirm()', (r) => r.some((x) => x['confirm'] === false));
        expect(sent.of('dialog')).toEqual([]);

        // The stage is not failed by it: the gate still waits, and the page goes on in the view.
        expect(await rest<{ state: string }>('GET', `/api/runs/${runId}`)).toMatchObject({ state: 'waiting' });
        expect(await stageState(runId, 'login')).toBe('waiting');
        expect(await gate.getByTestId('gate-accept').isEnabled()).toBe(true);
        expect(await view.getAttribute('data-phase')).toBe('live');
        const seen = await frames(canvas);
        await waitFor('pictures of the ticking page after the time-out', async () => (await frames(canvas)) > seen + 1);
        expect(await view.getByTestId('live-view-status').textContent()).toBe('Live: click the picture to focus it, then type.');
      } finally {
        await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
      }
      expect(pageErrors).toEqual([]);
    });

    it('fills a prompt with the page\'s default and sends it on Accept without editing; an alert is accepted at once and shown a few seconds without buttons', async () => {
      const runId = await startRun('console-dialogs');
      try {
        const { sent, reports, reported, canvas, dialog } = await openDialogsGate(runId);

        // A prompt: its text box holds the page's default; Accept as it is sends no promptText, and the page gets the default.
        await canvas.click({ position: await at(canvas, 0.25, 0.25) });
        await dialog.filter({ has: page.getByTestId('live-view-dialog-input') }).waitFor();
        expect(await dialog.getAttribute('data-kind')).toBe('prompt');
        expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Your <i>name</i>?');
        expect(await dialog.locator('i').count()).toBe(0);
        expect(await dialog.getByTestId('live-view-dialog-input').inputValue()).toBe('Ada <Lovelace>');
        await dialog.getByTestId('live-view-dialog-accept').click();
        await reported('the page to get the default from prompt()', (r) => r.some((x) => 'prompt' in x));
        expect(reports().filter((x) => 'prompt' in x)).toEqual([{ prompt: 'Ada <Lovelace>' }]);
        expect(sent.of('dialog')).toEqual([{ type: 'dialog', id: expect.any(Number), action: 'accept' }]);
        await dialog.waitFor({ state: 'hidden' });

        // Edited, the answer is what was typed.
        await canvas.click({ position: await at(canvas, 0.25, 0.25) });
        const input = dialog.getByTestId('live-view-dialog-input');
        await input.waitFor();
        expect(await input.inputValue()).toBe('Ada <Lovelace>');
        await input.fill('Grace');
        await dialog.getByTestId('live-view-dialog-accept').click();
        await reported('the page to get the typed answer', (r) => r.some((x) => x['prompt'] === 'Grace'));
        expect(sent.of('dialog')[1]).toEqual({ type: 'dialog', id: expect.any(Number), action: 'accept', promptText: 'Grace' });
        await dialog.waitFor({ state: 'hidden' });

        // An alert: the Host accepts it at once (the page goes on while it shows), the overlay shows it for a few
        // seconds without buttons, then goes. Timed in the page, where the overlay changes.
        await dialog.evaluate((overlay) => {
          const times: Array<{ hidden: boolean; at: number }> = [];
          (window as unknown as { __overlay: typeof times }).__overlay = times;
          new MutationObserver(() => times.push({ hidden: (overlay as HTMLElement).hidden, at: performance.now() })).observe(overlay, { attributes: true, attributeFilter: ['hidden'] });
        });
        await canvas.click({ position: await at(canvas, 0.25, 0.4) });
        await dialog.filter({ hasText: 'Saved <b>1</b> item' }).waitFor();
        expect(await dialog.getAttribute('data-kind')).toBe('alert');
        expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Saved <b>1</b> item');
        expect(await dialog.locator('b').count()).toBe(0);
        expect(await dialog.textContent()).toContain('Accepted automatically; the page went on.');
        expect(await dialog.locator('button, input').count()).toBe(0);
        await reported('the page to go on past alert()', (r) => r.some((x) => x['alerted'] === true));
        await dialog.waitFor({ state: 'hidden', timeout: 20_000 });
        const times = await page.evaluate(() => (window as unknown as { __overlay: Array<{ hidden: boolean; at: number }> }).__overlay);
        expect(times.map((t) => t.hidden)).toEqual([false, true]);
        const shownMs = times[1].at - times[0].at;
        expect(shownMs).toBeGreaterThanOrEqual(3000);
        expect(shownMs).toBeLessThan(15_000);
        expect(sent.of('dialog')).toHaveLength(2);
        expect(sent.received.filter((m) => m['type'] === 'error')).toEqual([]);
      } finally {
        await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
      }
      expect(pageErrors).toEqual([]);
    });

    it('shows a view-only viewer the open confirm as plain text and whom it waits for, without buttons; the interactive viewer answers and it goes', async () => {
      const sent = recordLiveViewSockets(page);
      const { reported } = pageReports(site.reports.length, sent);
      const runId = await startRun('console-watch-dialog');
      let interactive: WebSocket | undefined;
      try {
        await page.goto(`${base}/runs/${runId}`);
        const watchButton = page.getByTestId('watch-browser-agent');
        await watchButton.waitFor({ timeout: 60_000 });
        await reported('agent-browser to open the page', (r) => r.some((x) => x['loaded'] === '/watch-dialog'), 60_000);

        // The interactive viewer: the console opens one only on a login gate, whose stage waits and so offers no
        // Watch browser; here it is a client of the same api, sending what the console's overlay sends.
        const { ticket, path } = await rest<{ ticket: string; path: string }>('POST', `/api/runs/${runId}/stages/agent/live-view/tickets`, { mode: 'interactive' });
        const socket = new WebSocket(`ws://127.0.0.1:${apiPort}${path}?ticket=${ticket}`);
        interactive = socket;
        const received: Array<Record<string, unknown>> = [];
        socket.on('message', (data, isBinary) => {
          if (!isBinary) received.push(JSON.parse(String(data)) as Record<string, unknown>);
        });
        await waitFor('ready on the interactive socket', async () => received.some((m) => m['type'] === 'ready'));

        site.askWatchDialog();
        const opened = await waitFor('the confirm on the interactive socket', async () => received.find((m) => m['type'] === 'dialog'));
        expect(opened).toMatchObject({ kind: 'confirm', message: 'Deploy <b>x</b>?', canAnswer: true, waitsFor: 'operator' });

        // A second viewer joins while it is open: Watch browser shows it over the picture, as text, with no way to answer.
        await watchButton.click();
        const view = page.locator('[data-stage="agent"].stage').getByTestId('live-view');
        expect(await view.getAttribute('data-mode')).toBe('view-only');
        const dialog = view.getByTestId('live-view-dialog');
        await dialog.waitFor();
        expect(await dialog.getAttribute('data-kind')).toBe('confirm');
        expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Deploy <b>x</b>?');
        expect(await dialog.locator('b').count()).toBe(0);
        expect(await dialog.getByTestId('live-view-dialog-waits').textContent()).toBe('Waiting for the operator (an interactive live view) to answer.');
        expect(await dialog.locator('button, input').count()).toBe(0);
        expect(await view.getByTestId('live-view-dialog-accept').count()).toBe(0);
        expect(await view.getByTestId('live-view-dialog-dismiss').count()).toBe(0);
        expect(sent.received.find((m) => m['type'] === 'dialog')).toMatchObject({ id: opened['id'], canAnswer: false, waitsFor: 'operator' });
        // It shows the picture under it (the last one, from before the dialog).
        await view.locator('[data-testid=live-view-canvas][data-frames]').waitFor();

        socket.send(JSON.stringify({ type: 'dialog', id: opened['id'], action: 'accept' }));
        await reported('the page to get true from confirm()', (r) => r.some((x) => x['watchConfirm'] === true));
        await waitFor('the interactive viewer to hear it closed', async () => received.find((m) => m['type'] === 'dialog-closed'));
        expect(received.find((m) => m['type'] === 'dialog-closed')).toMatchObject({ id: opened['id'], outcome: 'accepted' });
        await dialog.waitFor({ state: 'hidden' });
        expect(sent.received.find((m) => m['type'] === 'dialog-closed')).toMatchObject({ id: opened['id'], outcome: 'accepted' });
        // The page goes on in the read-only view, which sent nothing.
        const canvas = view.getByTestId('live-view-canvas');
        const seen = await frames(canvas);
        await waitFor('pictures of the ticking page after the answer', async () => (await frames(canvas)) > seen + 1);
        expect(sent.messages).toEqual([]);
        expect(await stageState(runId, 'agent')).toBe('running');
      } finally {
        interactive?.terminate();
        await rest('POST', `/api/runs/${runId}/cancel`, {}).catch(() => undefined);
      }
      expect(pageErrors).toEqual([]);
    });
  });

  it('creates a profile, shows the refusal to delete it while a run holds it, deletes it after, and lists both in the audit', async () => {
    await page.goto(`${base}/profiles`);
    const create = page.getByTestId('create-profile');
    await create.getByLabel('Name').fill('console-demo');
    await create.getByRole('button', { name: 'Create' }).click();
    const row = page.locator('tr[data-profile="console-demo"]');
    await row.waitFor();
    expect(await row.getByTestId('holder').textContent()).toBe('free');

    // A run holds the profile (as browser-host grants it to a run's first browser stage).
    const holderRun = await startRun('console-demo', { sleep: 0 });
    const leases = new ProfileLeases({ redis: testRedisUrl(), keys: new RedisKeys(prefix) });
    try {
      await leases.acquire('local', 'console-demo', holderRun);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await row.getByTestId('holder').getByRole('link', { name: holderRun }).waitFor();

      page.once('dialog', (dialog) => void dialog.accept());
      await row.getByRole('button', { name: 'Delete' }).click();
      const refusal = page.getByRole('alert');
      await refusal.filter({ hasText: 'profile_leased' }).waitFor();
      expect(await refusal.textContent()).toContain(`in use by run ${holderRun}`);
      expect(await refusal.getByRole('link', { name: holderRun }).count()).toBe(1);
      expect(await row.count()).toBe(1);

      await leases.release('local', 'console-demo', holderRun);
    } finally {
      await leases.close();
    }
    await page.getByRole('button', { name: 'Refresh' }).click();
    await row.getByTestId('holder').filter({ hasText: 'free' }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' }).catch(async (error: Error) => {
      const alerts = await page.getByRole('alert').allTextContents();
      throw new Error(`${error.message}; the page says ${JSON.stringify(alerts)}`);
    });

    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByTestId('audit-filters').getByLabel('Profile').fill('console-demo');
    await page.getByTestId('audit-filters').getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(`${base}/audit?profile=console-demo&limit=100`);
    await page.locator('[data-testid=audit-table] tr[data-type="profile_deleted"]').waitFor();
    const types = await page.locator('[data-testid=audit-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-type')));
    expect(types).toEqual(['profile_deleted', 'profile_created']);
    expect(pageErrors).toEqual([]);
  });
});
