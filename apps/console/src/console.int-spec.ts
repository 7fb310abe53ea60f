import { RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page, type WebSocketRoute } from 'playwright-core';

/**
 * The console in a real Chromium, served by a real api process, with a real
 * runner process on the integration Redis: what an operator does with it.
 */
jest.setTimeout(180_000);

const ROOT = resolve(__dirname, '../../..');
const TOKEN = 'console-int-token-0123456789abcdef';
const CHROMIUM = '/usr/bin/chromium';

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

/** A human login gate: the live view belongs here. */
const LOGIN = `name: console-login
stages:
  - id: login
    kind: gate
    message: "Log in to the demo site, then accept."
    verify: browser_login
    browser:
      profile: console-login
      login_url: http://127.0.0.1:9/login
      check:
        url: http://127.0.0.1:9/account
        logged_out_url: "*/login*"
`;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
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

describe('the console in a browser', () => {
  const prefix = uniquePrefix('sft-console');
  const dir = mkdtempSync(join(tmpdir(), 'sf-console-it-'));
  const consoleDir = join(dir, 'console');
  const home = join(dir, 'home');
  let apiPort: number;
  let api: ChildProcess | undefined;
  let runner: ChildProcess | undefined;
  let browserHost: ChildProcess | undefined;
  const hostId = `it-console-${process.pid}`;
  const runtimeDir = `/tmp/sfc-${process.pid}`;
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

  const startApi = async () => {
    api = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/api/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        SWC_NODE_PROJECT: 'tsconfig.base.json',
        STAGEFLOW_REDIS_URL: testRedisUrl(),
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_API_PORT: String(apiPort),
        STAGEFLOW_API_TOKEN: TOKEN,
        STAGEFLOW_CONSOLE_DIR: consoleDir,
        STAGEFLOW_HOME: home,
        STAGEFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor('the api to answer /api/health', async () => (await fetch(`${base}/api/health`)).status === 200, 90_000);
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
    apiPort = await freePort();
    base = `http://127.0.0.1:${apiPort}`;
    // browser-host for the login gate's browser: no screen here, but this console serves the live view.
    const browserHostPort = await freePort();
    browserHost = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        SWC_NODE_PROJECT: 'tsconfig.base.json',
        STAGEFLOW_REDIS_URL: testRedisUrl(),
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_HOME: join(dir, 'browser-host-home'),
        STAGEFLOW_HOST_ID: hostId,
        STAGEFLOW_BROWSER_TMP: dir,
        // Short: agent-browser's unix socket paths live under it.
        STAGEFLOW_BROWSER_RUNTIME_DIR: runtimeDir,
        STAGEFLOW_BROWSER_HOST_PORT: String(browserHostPort),
        STAGEFLOW_LIVE_VIEW: 'true',
        STAGEFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor('browser-host to answer /health', async () => (await fetch(`http://127.0.0.1:${browserHostPort}/health`)).status === 200, 90_000);
    runner = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/runner/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        HOME: process.env['HOME'],
        SWC_NODE_PROJECT: 'tsconfig.base.json',
        STAGEFLOW_REDIS_URL: testRedisUrl(),
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_WORK_DIR: join(dir, 'work'),
        STAGEFLOW_HOME: join(dir, 'runner-home'),
        STAGEFLOW_RUNNER_HEALTH_PORT: String(await freePort()),
        STAGEFLOW_BROWSER_HOST_URL: `http://127.0.0.1:${browserHostPort}`,
        STAGEFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await startApi();
    for (const yaml of [DEMO, LOGIN]) {
      const res = await fetch(`${base}/api/pipelines`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'text/yaml' }, body: yaml });
      expect(res.status).toBe(201);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // No update checks, field trials or first-run work: this network is closed and the test must not wait on it.
      args: ['--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  }, 180_000);

  beforeEach(() => openPage(true));
  afterEach(() => page?.context().close());

  afterAll(async () => {
    await browser?.close();
    await Promise.all([stop(api), stop(runner), stop(browserHost)]);
    // Any Chromium the login gate left (its run is cancelled by the test; this is the backstop).
    for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(`--stageflow-host=${hostId}`)) process.kill(Number(entry), 'SIGKILL');
      } catch {
        // gone
      }
    }
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

  it('shows a login gate with its line, tip and reopen control, and says when its live view cannot be reached', async () => {
    // Started from the console's own form, with a JSON input.
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
    expect((await rest<{ input: unknown; pipeline: string }>('GET', `/api/runs/${runId}`))).toMatchObject({ pipeline: 'console-login', input: { ticket: 7 } });
    const gate = page.locator('[data-testid=gate][data-gate="login"]');
    await gate.waitFor();
    expect(await gate.locator('.login-line').textContent()).toBe('Log in in the browser view below, then confirm.');
    const view = gate.getByTestId('live-view');
    // This test runs no relay: the api issues the ticket, but the view cannot be reached, and says so.
    await gate.locator('[data-testid=live-view][data-phase="failed"], [data-testid=live-view][data-phase="disconnected"]').first().waitFor();
    expect((await view.locator('.lv-status').textContent())?.length).toBeGreaterThan(0);
    expect(await view.locator('.tip').textContent()).toContain('Native browser prompts are not drawn in the picture');
    expect(await view.getByText('Page seems stuck?').count()).toBe(1);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.run-page[data-state="cancelled"]').waitFor();
    await gate.waitFor({ state: 'detached' });
  });

  it('drives a login gate\'s live view over the agreed relay protocol: frames, address, clicks and keys, page dialogs, reopen, end', async () => {
    // The relay and its ticket route are not merged yet: the browser stands in for both, speaking the protocol
    // the console is written against (apps/console/src/live-view/live-view.protocol.ts).
    await page.goto(`${base}/audit`);
    const frame = await page.screenshot({ type: 'jpeg', clip: { x: 0, y: 0, width: 640, height: 360 } });
    const runId = await startRun('console-login');
    const tickets: unknown[] = [];
    await page.route('**/live-view/tickets', async (route) => {
      tickets.push({ url: new URL(route.request().url()).pathname, body: route.request().postDataJSON(), auth: route.request().headers()['authorization'] });
      await route.fulfill({
        status: 201,
        contentType: 'application/json',
        body: JSON.stringify({ ticket: 'tk 1', expiresAt: new Date(Date.now() + 30_000).toISOString(), path: `/api/runs/${runId}/stages/login/live-view` }),
      });
    });
    const sent: Record<string, unknown>[] = [];
    const relayReady = new Promise<WebSocketRoute>((done) => {
      void page.routeWebSocket(/\/live-view\?ticket=/, (ws) => {
        ws.onMessage((message) => sent.push(JSON.parse(String(message))));
        done(ws);
      });
    });
    const sentOf = (type: string) => sent.filter((m) => m['type'] === type);
    try {
      await page.goto(`${base}/runs/${runId}`);
      const relay = await Promise.race([
        relayReady,
        new Promise<never>((_, fail) => setTimeout(() => fail(new Error('the console never opened the live-view socket')), 30_000)),
      ]);
      expect(tickets).toEqual([{ url: `/api/runs/${runId}/stages/login/live-view/tickets`, body: { mode: 'interactive' }, auth: `Bearer ${TOKEN}` }]);
      expect(relay.url()).toContain(`/api/runs/${runId}/stages/login/live-view?ticket=tk%201`);

      const view = page.locator('[data-gate="login"] [data-testid=live-view]');
      relay.send(JSON.stringify({ type: 'frame-meta', deviceWidth: 1280, deviceHeight: 720, offsetTop: 0, pageScaleFactor: 1 }));
      relay.send(JSON.stringify({ type: 'url', url: 'http://127.0.0.1:9/login?next=%2Faccount' }));
      relay.send(frame);
      await view.locator('.lv-status').waitFor({ state: 'hidden' });
      expect(await view.locator('.lv-url').textContent()).toBe('http://127.0.0.1:9/login?next=%2Faccount');
      const canvas = view.locator('canvas');
      expect(await canvas.evaluate((c: HTMLCanvasElement) => [c.width, c.height])).toEqual([640, 360]);

      // A click in the middle of the picture is the middle of the 1280 × 720 page, whatever size it is shown at.
      const box = await canvas.boundingBox();
      if (!box) throw new Error('the live view canvas is not shown');
      await canvas.click({ position: { x: box.width / 2, y: box.height / 2 } });
      await waitFor('the click to reach the relay', async () => sentOf('mouse').some((m) => m['action'] === 'up'));
      const down = sentOf('mouse').find((m) => m['action'] === 'down') as { x: number; y: number };
      expect(sentOf('mouse').find((m) => m['action'] === 'down')).toMatchObject({ button: 'left', modifiers: 0 });
      expect(Math.abs(down.x - 640)).toBeLessThan(2);
      expect(Math.abs(down.y - 360)).toBeLessThan(2);

      await page.keyboard.type('a');
      await page.keyboard.press('Shift+Tab');
      await waitFor('the keys to reach the relay', async () => sentOf('key').length >= 6);
      expect(sentOf('key').map((m) => `${m['action']} ${m['key']} ${m['modifiers']}`)).toEqual(['down a 0', 'up a 0', 'down Shift 8', 'down Tab 8', 'up Tab 8', 'up Shift 0']);
      // Tab went to the page in the picture, not to the next control of the console.
      expect(await canvas.evaluate((c) => document.activeElement === c)).toBe(true);

      // A prompt: plain text over the last picture, the page's default filled in, the answer sent back.
      relay.send(JSON.stringify({ type: 'dialog', dialogType: 'prompt', message: 'Code for <b>ada</b>?', defaultPrompt: '123' }));
      const dialog = view.locator('.lv-dialog');
      await dialog.waitFor();
      expect(await dialog.locator('.lv-dialog-message').textContent()).toBe('Code for <b>ada</b>?');
      expect(await dialog.locator('b').count()).toBe(0);
      expect(await dialog.getByLabel('Answer').inputValue()).toBe('123');
      await dialog.getByLabel('Answer').fill('456');
      await dialog.getByRole('button', { name: 'Accept' }).click();
      await waitFor('the answer to reach the relay', async () => sentOf('dialog').length === 1);
      expect(sentOf('dialog')).toEqual([{ type: 'dialog', accept: true, promptText: '456' }]);
      relay.send(JSON.stringify({ type: 'dialog-closed' }));
      await dialog.waitFor({ state: 'hidden' });

      relay.send(JSON.stringify({ type: 'dialog', dialogType: 'confirm', message: 'Stay signed in?' }));
      await dialog.waitFor();
      relay.send(JSON.stringify({ type: 'dialog-closed', reason: 'timeout' }));
      await dialog.waitFor({ state: 'hidden' });
      expect(await view.locator('.lv-notice').textContent()).toBe('The page dialog was dismissed after waiting too long.');

      relay.send(JSON.stringify({ type: 'popup', following: true }));
      await view.locator('.lv-popup').waitFor();

      await view.getByText('Page seems stuck?').click();
      await view.getByRole('button', { name: 'Reopen browser tab' }).click();
      await waitFor('the reopen to reach the relay', async () => sentOf('reopen').length === 1);
      expect(await view.getByRole('button', { name: 'Reopen browser tab' }).isDisabled()).toBe(true);

      relay.send(JSON.stringify({ type: 'ended', reason: 'gate_answered' }));
      await view.locator('.lv-status').filter({ hasText: 'The live view closed: the gate was answered.' }).waitFor();
      // Input after the end is not sent.
      const before = sent.length;
      await canvas.click({ position: { x: 10, y: 10 } });
      await page.keyboard.type('z');
      await new Promise((done) => setTimeout(done, 300));
      expect(sent.length).toBe(before);
    } finally {
      await page.unrouteAll({ behavior: 'ignoreErrors' });
      await rest('POST', `/api/runs/${runId}/cancel`, {});
    }
    expect(pageErrors).toEqual([]);
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
    await row.waitFor({ state: 'detached' });

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
