import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CdpConnection } from '@stageflow/cdp';
import { loadServiceConfig, type ServiceConfig } from '@stageflow/config';
import { docker, waitFor } from '@stageflow/testing';
import type Docker from 'dockerode';
import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../app.module';
import { BrowserHostLifecycle } from '../../sweep/browser-host-lifecycle.service';
import type { StartupSweepReport } from '../../sweep/startup-sweep.service';

/**
 * Integration helpers for browser-host against real Redis and Chromium. No jest in
 * here: tests import it. Every host gets its own host id, key prefix and folders, so
 * parallel suites (and other engineers' browsers) are never touched.
 */

export interface HostDirs {
  root: string;
  home: string;
  hostId: string;
  prefix: string;
}

/** Fresh folders and ids; `config.yaml` is written into the Stageflow home. */
export async function hostDirs(configYaml: string): Promise<HostDirs> {
  const tag = randomBytes(3).toString('hex');
  const root = await mkdtemp(join(tmpdir(), 'sfbh-'));
  const home = join(root, 'home');
  await mkdir(home, { recursive: true, mode: 0o700 });
  await writeFile(join(home, 'config.yaml'), configYaml);
  return { root, home, hostId: `it-${tag}`, prefix: `sfbh-${tag}:` };
}

/** The environment browser-host reads (through the config lib). */
export function hostEnv(dirs: HostDirs, redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    STAGEFLOW_REDIS_URL: redisUrl,
    STAGEFLOW_REDIS_PREFIX: dirs.prefix,
    STAGEFLOW_HOME: dirs.home,
    STAGEFLOW_HOST_ID: dirs.hostId,
    STAGEFLOW_BROWSER_TMP: dirs.root,
    STAGEFLOW_LOG_LEVEL: 'warn',
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    ...extra,
  };
}

export interface HostInProcess {
  app: INestApplication;
  config: ServiceConfig;
  report: StartupSweepReport;
}

/** browser-host in this process, started and swept (ready for sessions). */
export async function bootHost(env: Record<string, string>): Promise<HostInProcess> {
  const config = loadServiceConfig('browser-host', env);
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  await app.init();
  const report = await app.get(BrowserHostLifecycle).whenStarted();
  if (!report) throw new Error('browser-host did not finish its startup sweep');
  return { app, config, report };
}

/** browser-host as its own process (main.ts), for a restart by SIGKILL. */
export async function spawnHost(env: Record<string, string>, port: number, logFile: string): Promise<ChildProcess> {
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
    cwd: process.cwd(),
    env: { ...env, STAGEFLOW_BROWSER_HOST_PORT: String(port), SWC_NODE_PROJECT: 'tsconfig.base.json', STAGEFLOW_LOG_LEVEL: 'info' },
    stdio: ['ignore', out, out],
  });
  await waitFor('the spawned browser-host to answer /health', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
    return res?.status === 200;
  }, 60_000);
  return child;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The shared poller (`@stageflow/testing`), re-exported for this harness's tests. */
export { waitFor };

export interface TestSite {
  port: number;
  /** `host path` of every request, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** 1×1 GIF. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/**
 * A site on 127.0.0.1: `/set?name=x` sets a persistent cookie (Max-Age=3600), `/echo`
 * shows the cookies it got, `/page?img=<url>` embeds an image, `/pixel.gif` is one.
 */
export async function startSite(): Promise<TestSite> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${(req.headers.host ?? '').replace(/:\d+$/, '')} ${url.pathname}`);
    if (url.pathname === '/pixel.gif') {
      res.setHeader('content-type', 'image/gif');
      res.end(PIXEL);
      return;
    }
    const name = url.searchParams.get('name');
    if (url.pathname === '/set' && name) res.setHeader('set-cookie', `${name}=1; Max-Age=3600; Path=/`);
    const img = url.searchParams.get('img');
    res.setHeader('content-type', 'text/html');
    res.end(`<title>${url.pathname}</title><pre id="cookies">${req.headers.cookie ?? ''}</pre>${img ? `<img id="img" src="${img}">` : ''}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A stage's view of its tab: attach, navigate, read. */
export class StageTab {
  private constructor(
    private readonly cdp: CdpConnection,
    readonly targetId: string,
    private readonly sessionId: string,
  ) {}

  static async attach(wsEndpoint: string, targetId: string): Promise<StageTab> {
    const cdp = await CdpConnection.connect(wsEndpoint, { callTimeoutMs: 30_000 });
    const sessionId = await cdp.attachToTab(targetId);
    await cdp.send('Page.enable', {}, { sessionId });
    return new StageTab(cdp, targetId, sessionId);
  }

  /** Navigates and waits for load; Chrome's errorText when the navigation failed. */
  async goto(url: string): Promise<string | undefined> {
    const loaded = this.cdp.waitForEvent('Page.loadEventFired', { sessionId: this.sessionId, timeoutMs: 30_000 });
    loaded.catch(() => undefined);
    const result = await this.cdp.send<{ errorText?: string }>('Page.navigate', { url }, { sessionId: this.sessionId });
    if (result.errorText) return result.errorText;
    await loaded;
    return undefined;
  }

  async evaluate<T>(expression: string): Promise<T> {
    const { result } = await this.cdp.send<{ result: { value: T } }>(
      'Runtime.evaluate',
      { expression, returnByValue: true, awaitPromise: true },
      { sessionId: this.sessionId },
    );
    return result.value;
  }

  /** Names of the cookies the site saw on `/echo`. */
  async cookiesAt(echoUrl: string): Promise<string[]> {
    const error = await this.goto(echoUrl);
    if (error) throw new Error(`navigation to ${echoUrl} failed: ${error}`);
    const text = await this.evaluate<string>('document.getElementById("cookies").textContent');
    return text.split(/;\s*/).filter(Boolean).map((c) => c.split('=')[0]).sort();
  }

  async url(): Promise<string> {
    const { targetInfo } = await this.cdp.send<{ targetInfo: { url: string } }>('Target.getTargetInfo', { targetId: this.targetId });
    return targetInfo.url;
  }

  async detach(): Promise<void> {
    await this.cdp.close();
  }
}

/** The page targets of a browser. */
export async function pagesOf(wsEndpoint: string): Promise<string[]> {
  const cdp = await CdpConnection.connect(wsEndpoint);
  try {
    return (await cdp.listPages()).map((p) => p.targetId);
  } finally {
    await cdp.close();
  }
}

/** Closes every page of the browser but one. */
export async function closePagesExcept(wsEndpoint: string, keep: string): Promise<void> {
  const cdp = await CdpConnection.connect(wsEndpoint);
  try {
    for (const page of await cdp.listPages()) if (page.targetId !== keep) await cdp.closeTab(page.targetId);
  } finally {
    await cdp.close();
  }
}

/** Main Chromium processes (not helpers) of a host, from /proc. */
export async function chromiumOf(hostId: string): Promise<Array<{ pid: number; browserId: string }>> {
  const found: Array<{ pid: number; browserId: string }> = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (!argv.includes(`--stageflow-host=${hostId}`) || argv.some((a) => a.startsWith('--type='))) continue;
    const id = argv.find((a) => a.startsWith('--stageflow-browser-id='))?.slice('--stageflow-browser-id='.length);
    const stat = await readFile(`/proc/${entry}/stat`, 'latin1').catch(() => '');
    if (id && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push({ pid: Number(entry), browserId: id });
  }
  return found;
}

/** A live process (a zombie counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * A stand-in for agent-browser's daemon (detached, like the real one): started with
 * the session's environment, it writes `<session>.pid` and `.sock` and removes them on
 * SIGTERM, as agent-browser 0.41.2 does.
 */
export async function startAgentDaemon(socketDir: string, session: string): Promise<number> {
  const script = `
    const fs = require('fs'), path = require('path');
    const dir = process.env.AGENT_BROWSER_SOCKET_DIR, name = process.env.AGENT_BROWSER_SESSION;
    fs.writeFileSync(path.join(dir, name + '.sock'), '');
    fs.writeFileSync(path.join(dir, name + '.pid'), String(process.pid));
    process.on('SIGTERM', () => { for (const e of ['.sock', '.pid']) fs.rmSync(path.join(dir, name + e), { force: true }); process.exit(0); });
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', script], {
    detached: true,
    stdio: 'ignore',
    env: { AGENT_BROWSER_SOCKET_DIR: socketDir, AGENT_BROWSER_SESSION: session, AGENT_BROWSER_DAEMON: '1' },
  });
  child.unref();
  const pid = child.pid as number;
  await waitFor('the agent daemon pid file', () => exists(join(socketDir, `${session}.pid`)), 10_000);
  return pid;
}

/** Test cleanup: SIGKILL whatever a failed test left of a host's browsers. */
export async function killHostBrowsers(hostId: string): Promise<void> {
  for (const { pid } of await chromiumOf(hostId)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
  }
}

export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (found.length) await redis.del(...found);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function removeDirs(dirs: HostDirs): Promise<void> {
  await rm(dirs.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** `docker inspect` of every container (any state) labelled with the host id and, optionally, a run. */
export async function browserContainers(hostId: string, runId?: string): Promise<Docker.ContainerInspectInfo[]> {
  const filters = ['--filter', `label=stageflow.host=${hostId}`, ...(runId ? ['--filter', `label=stageflow.run=${runId}`] : [])];
  const ids = (await docker('ps', '-aq', ...filters)).split('\n').filter(Boolean);
  return ids.length ? (JSON.parse(await docker('inspect', ...ids)) as Docker.ContainerInspectInfo[]) : [];
}
