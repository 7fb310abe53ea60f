import { RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix, waitFor } from '@stageflow/testing';
import Redis from 'ioredis';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * "Check now" on the Profiles page, in a real Chromium: the console served by a
 * real api process, which asks a real browser-host process (sharing its
 * Stageflow home, as in compose) to check the profile on a local site.
 */
jest.setTimeout(180_000);

const ROOT = resolve(__dirname, '../../../..');
const TOKEN = 'console-check-token-0123456789abcdef';
const CHROMIUM = '/usr/bin/chromium';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
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

describe('Check now on the Profiles page', () => {
  const prefix = uniquePrefix('sft-console-check');
  const dir = mkdtempSync(join(tmpdir(), 'sf-console-check-'));
  const consoleDir = join(dir, 'console');
  const home = join(dir, 'home');
  const hostId = `it-cc-${process.pid}`;
  // Short: agent-browser's unix socket paths live under it.
  const runtimeDir = `/tmp/sfcc-${process.pid}`;
  let api: ChildProcess | undefined;
  let browserHost: ChildProcess | undefined;
  let site: Server;
  let siteUrl: string;
  let base: string;
  let browser: Browser;
  let page: Page;

  const rest = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (res.status === 204 ? undefined : await res.json()) as T;
  };

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'apps/console/build.cjs'), '--outdir', consoleDir], { stdio: 'pipe' });
    mkdirSync(home, { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'config.yaml'), '');
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      // Never logged in: the account page always sends the browser to the login page.
      if ((req.url ?? '/').startsWith('/account')) return void res.writeHead(302, { location: '/login?next=/account' }).end();
      res.setHeader('content-type', 'text/html');
      res.end('<title>login</title>');
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    const browserHostPort = await freePort();
    browserHost = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'],
        SWC_NODE_PROJECT: 'tsconfig.base.json',
        STAGEFLOW_REDIS_URL: testRedisUrl(),
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_HOME: home,
        STAGEFLOW_HOST_ID: hostId,
        STAGEFLOW_BROWSER_TMP: dir,
        STAGEFLOW_BROWSER_RUNTIME_DIR: runtimeDir,
        STAGEFLOW_BROWSER_HOST: 'local',
        STAGEFLOW_BROWSER_HOST_PORT: String(browserHostPort),
        STAGEFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const apiPort = await freePort();
    base = `http://127.0.0.1:${apiPort}`;
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
        STAGEFLOW_BROWSER_HOST_URL: `http://127.0.0.1:${browserHostPort}`,
        STAGEFLOW_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor('browser-host to answer /health', async () => (await fetch(`http://127.0.0.1:${browserHostPort}/health`).catch(() => undefined))?.status === 200, 90_000);
    await waitFor('the api to answer /api/health', async () => (await fetch(`${base}/api/health`).catch(() => undefined))?.status === 200, 90_000);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // No update checks, field trials or first-run work: this network is closed and the test must not wait on it.
      args: ['--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript((token) => sessionStorage.setItem('stageflow.apiToken', token), TOKEN);
    page = await context.newPage();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all([stop(api), stop(browserHost)]);
    for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(`--stageflow-host=${hostId}`)) process.kill(Number(entry), 'SIGKILL');
      } catch {
        // gone
      }
    }
    site?.closeAllConnections();
    await new Promise((done) => site?.close(done));
    const redis = new Redis(testRedisUrl());
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
    rmSync(runtimeDir, { recursive: true, force: true });
  });

  it('shows the result of Check now in the row, and the run that holds the profile when it is refused', async () => {
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await rest('POST', '/api/profiles', { name: 'console-check', check: { url: `${siteUrl}/account`, logged_out_url: '*/login*' } });
    await page.goto(`${base}/profiles`);
    const row = page.locator('tr[data-profile="console-check"]');
    const result = row.getByTestId('profile-check-result-console-check');
    await result.filter({ hasText: 'never checked' }).waitFor();

    await page.getByTestId('profile-check-console-check').click();
    await result.and(page.locator('[data-state="logged_out"]')).waitFor();
    expect(await result.textContent()).toContain('logged out');
    expect(await result.getAttribute('title')).toBe(`${siteUrl}/login?next=/account`);
    // Kept by the api: a reload shows it too.
    await page.reload();
    await result.and(page.locator('[data-state="logged_out"]')).waitFor();

    const run = await rest<{ id: string }>('POST', '/api/runs', { yaml: 'version: 1\nname: hold\nstages:\n  - id: a\n    command: "true"\n' });
    const leases = new ProfileLeases({ redis: testRedisUrl(), keys: new RedisKeys(prefix) });
    try {
      await leases.acquire('local', 'console-check', run.id);
      await page.getByTestId('profile-check-console-check').click();
      await result.and(page.locator('[data-state="failed"]')).waitFor();
      expect(await result.textContent()).toContain(`in use by run ${run.id}`);
      const alert = page.getByRole('alert').filter({ hasText: 'profile_leased' });
      await alert.getByRole('link', { name: run.id }).waitFor();
    } finally {
      await leases.release('local', 'console-check', run.id);
      await leases.close();
      await rest('POST', `/api/runs/${run.id}/cancel`, {});
    }
    expect(errors).toEqual([]);
  });
});
