import { waitFor } from '@stageflow/testing';
import { CdpConnection } from '@stageflow/cdp';
import type { StageSession } from '@stageflow/contracts';
import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

/**
 * Integration helpers for the live view against real Redis, a real browser-host
 * (its own process) and real Chromium. No jest in here: tests import it. Every
 * suite gets its own home, host id and key prefix.
 */

export interface Stack {
  root: string;
  home: string;
  hostId: string;
  prefix: string;
}

export async function stackDirs(configYaml: string): Promise<Stack> {
  const tag = randomBytes(3).toString('hex');
  const root = await mkdtemp(join(tmpdir(), 'sflv-'));
  const home = join(root, 'home');
  await mkdir(home, { recursive: true, mode: 0o700 });
  await writeFile(join(home, 'config.yaml'), configYaml);
  return { root, home, hostId: `lv-${tag}`, prefix: `sflv-${tag}:` };
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

/** The stack's environment for one service: its Redis, prefix and home. */
export function stackEnv(stack: Stack, redisUrl: string): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    STAGEFLOW_REDIS_URL: redisUrl,
    STAGEFLOW_REDIS_PREFIX: stack.prefix,
    STAGEFLOW_HOME: stack.home,
    STAGEFLOW_HOST_ID: stack.hostId,
    STAGEFLOW_BROWSER_TMP: stack.root,
    STAGEFLOW_LOG_LEVEL: 'info',
    SWC_NODE_PROJECT: 'tsconfig.base.json',
  };
}

/**
 * A service as its own process (`apps/<app>/src/main.ts`; apps never import each
 * other), its log lines (stdout and stderr) in `logFile`, once `healthPath` answers 200.
 * If it does not (it exits, the wait times out, or `signal` aborts), it is stopped and
 * the error thrown: no process outlives a failed start.
 */
export async function spawnService(app: string, env: Record<string, string>, healthUrl: string, logFile: string, signal?: AbortSignal): Promise<ChildProcess> {
  signal?.throwIfAborted();
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['-r', '@swc-node/register', `apps/${app}/src/main.ts`], { cwd: process.cwd(), env, stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${app} exited (${code}) before it answered; see ${logFile}`))));
  exited.catch(() => undefined);
  const aborted = new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
  aborted.catch(() => undefined);
  try {
    await Promise.race([
      waitFor(`${app} to answer ${healthUrl}`, async () => (await fetch(healthUrl).catch(() => undefined))?.status === 200, 120_000),
      exited,
      aborted,
    ]);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return child;
}

/** The three services a live view goes through, each its own process, on free loopback ports. */
export interface LiveViewServices {
  hostUrl: string;
  relayUrl: string;
  /** The api, where tickets are issued and viewers connect. */
  apiUrl: string;
  apiPort: number;
  browserHost: ChildProcess;
  relay: ChildProcess;
  api: ChildProcess;
  /** Stops the api, the relay, then browser-host. */
  stop(): Promise<void>;
}

/**
 * Starts browser-host, live-view-relay and the api (forwarding live views to that
 * relay) with the stack's environment plus `env`; their logs go to
 * `<root>/browser-host.log`, `relay.log` and `api.log`. One at a time: three
 * TypeScript boots at once starve a small machine. If one fails to start (or `signal`
 * aborts), those already started are stopped before the error is thrown.
 */
export async function startLiveViewServices(stack: Stack, redisUrl: string, env: Record<string, string> = {}, signal?: AbortSignal): Promise<LiveViewServices> {
  const base = { ...stackEnv(stack, redisUrl), ...env };
  const [hostPort, relayPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const hostUrl = `http://127.0.0.1:${hostPort}`;
  const relayUrl = `http://127.0.0.1:${relayPort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const started: ChildProcess[] = [];
  try {
    started.push(await spawnService('browser-host', { ...base, STAGEFLOW_BROWSER_HOST_PORT: String(hostPort) }, `${hostUrl}/health`, join(stack.root, 'browser-host.log'), signal));
    started.push(await spawnService('live-view-relay', { ...base, STAGEFLOW_RELAY_PORT: String(relayPort), STAGEFLOW_BROWSER_HOST_URL: hostUrl }, `${relayUrl}/health`, join(stack.root, 'relay.log'), signal));
    started.push(await spawnService('api', { ...base, STAGEFLOW_API_PORT: String(apiPort), STAGEFLOW_LIVE_VIEW_URL: relayUrl }, `${apiUrl}/api/health`, join(stack.root, 'api.log'), signal));
  } catch (error) {
    for (const child of started.reverse()) await stop(child);
    throw error;
  }
  const [browserHost, relay, api] = started;
  return {
    hostUrl,
    relayUrl,
    apiUrl,
    apiPort,
    browserHost,
    relay,
    api,
    stop: async () => {
      for (const child of [api, relay, browserHost]) await stop(child);
    },
  };
}

/** What browser-host needs to open a stage session (the runner sends the same). */
export interface StageSessionRequest {
  runId: string;
  stageId: string;
  profile: string;
  leaseToken: number;
  /** @defaultValue 1 */
  attempt?: number;
}

/** A stage session (its own tab in the run's browser), as the runner would open it. */
export async function openStageSession(hostUrl: string, request: StageSessionRequest): Promise<StageSession> {
  const res = await fetch(`${hostUrl}/internal/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attempt: 1, ...request, headed: false, allowDomains: [] }),
  });
  if (res.status !== 201) throw new Error(`browser-host answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as StageSession;
}

export interface IssuedTicket {
  ticket: string;
  /** The live view's path on the api (no ticket in it). */
  path: string;
  mode: string;
}

/** A live-view ticket from the api, as the console asks for one (no `mode`: the api's default). */
export async function issueTicket(apiUrl: string, runId: string, stageId: string, mode?: 'interactive' | 'view-only'): Promise<IssuedTicket> {
  const res = await fetch(`${apiUrl}/api/runs/${runId}/stages/${stageId}/live-view/tickets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(mode ? { mode } : {}),
  });
  if (res.status !== 201) throw new Error(`the api answered ${res.status} to a ticket for ${stageId}: ${await res.text()}`);
  return (await res.json()) as IssuedTicket;
}

/** The WebSocket URL a console opens for a ticket: the api's live-view path. */
export function liveViewUrl(apiUrl: string, path: string, ticket: string): string {
  return `${apiUrl.replace(/^http/, 'ws')}${path}?ticket=${ticket}`;
}

/** Deletes the stack's keys (its prefix) from Redis. */
export async function deleteStackKeys(stack: Stack, redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys = await redis.keys(`${stack.prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

/** Stops a spawned process (SIGTERM, SIGKILL after 15 s). */
export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Main Chromium processes (not helpers) of a host id, from /proc; killed by pid at the end of a suite. */
export async function chromiumPidsOf(hostId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (argv.includes(`--stageflow-host=${hostId}`) && !argv.some((a) => a.startsWith('--type='))) pids.push(Number(entry));
  }
  return pids;
}

export async function killChromiumOf(hostId: string): Promise<void> {
  for (const pid of await chromiumPidsOf(hostId)) {
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

export async function removeStack(stack: Stack): Promise<void> {
  await rm(stack.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

export interface Site {
  port: number;
  url(path: string): string;
  close(): Promise<void>;
}

const PAGES: Record<string, string> = {
  '/form': `<title>form</title><body style="margin:0">
    <input id="name" style="position:absolute;left:40px;top:40px;width:300px;height:40px">
    <input id="second" style="position:absolute;left:40px;top:120px;width:300px;height:40px">
    <div id="menu" style="position:absolute;left:40px;top:200px;width:200px;height:60px;background:#ccd"></div>
    <script>
      window.events = [];
      document.getElementById('menu').addEventListener('contextmenu', (e) => { e.preventDefault(); events.push('contextmenu'); });
      document.getElementById('menu').addEventListener('dblclick', () => events.push('dblclick'));
    </script></body>`,
  '/opener': `<title>opener</title><body style="margin:0">
    <button id="open" style="position:absolute;left:40px;top:40px;width:200px;height:60px" onclick="window.open('/popup', 'idp', 'width=500,height=400')">Sign in</button>
    <button id="open-confirm" style="position:absolute;left:40px;top:140px;width:200px;height:60px" onclick="window.open('/popup-confirm', 'idp2', 'width=500,height=400')">Sign in (asks)</button>
    <a id="help" href="/plain" style="position:absolute;left:40px;top:240px;width:200px;height:40px;display:block">Help</a>
    <script>window.addEventListener('message', (e) => { document.title = 'got:' + e.data; });</script></body>`,
  '/popup': `<title>popup</title><body style="margin:0">
    <button id="done" style="position:absolute;left:0;top:0;width:100%;height:100%" onclick="window.opener.postMessage('hello', '*'); window.close()">Done</button></body>`,
  '/popup-confirm': `<title>asks</title><body>asks<script>
    const answer = confirm('Continue as Ada?');
    window.opener.postMessage('confirm:' + answer, '*');</script></body>`,
  '/plain': '<title>plain</title><body><h1>Nothing moves here</h1></body>',
};

/**
 * Pages on 127.0.0.1: a form, a page that opens popups, popups, cookies (`/set?name=`,
 * `/cookies`), and `pages` of the caller's own (path → HTML).
 */
export async function startSite(pages: Record<string, string> = {}): Promise<Site> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    const name = url.searchParams.get('name');
    if (url.pathname === '/set' && name) {
      res.setHeader('set-cookie', `${name}=1; Max-Age=3600; Path=/`);
      res.end(`<title>set</title>set ${name}`);
      return;
    }
    if (url.pathname === '/cookies') {
      res.end(`<title>cookies</title><pre id="cookies">${req.headers.cookie ?? ''}</pre>`);
      return;
    }
    const page = pages[url.pathname] ?? PAGES[url.pathname];
    if (!page) {
      res.statusCode = 404;
      res.end('<title>404</title>');
      return;
    }
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The test's own look at a tab (what the stage's agent would see): navigate, evaluate. */
export class PageProbe {
  private constructor(
    private readonly cdp: CdpConnection,
    private readonly sessionId: string,
  ) {}

  static async attach(cdpEndpoint: string, targetId: string): Promise<PageProbe> {
    const cdp = await CdpConnection.connect(cdpEndpoint, { callTimeoutMs: 30_000 });
    const sessionId = await cdp.attachToTab(targetId);
    await cdp.send('Page.enable', {}, { sessionId });
    return new PageProbe(cdp, sessionId);
  }

  async goto(url: string): Promise<void> {
    const loaded = this.cdp.waitForEvent('Page.loadEventFired', { sessionId: this.sessionId, timeoutMs: 30_000 });
    loaded.catch(() => undefined);
    const { errorText } = await this.cdp.send<{ errorText?: string }>('Page.navigate', { url }, { sessionId: this.sessionId });
    if (errorText) throw new Error(`navigation to ${url} failed: ${errorText}`);
    await loaded;
  }

  async evaluate<T>(expression: string): Promise<T> {
    const { result } = await this.cdp.send<{ result: { value: T } }>('Runtime.evaluate', { expression, returnByValue: true }, { sessionId: this.sessionId, timeoutMs: 10_000 });
    return result.value;
  }

  /** Runs page script that opens a dialog, without waiting for it (the page blocks until it is answered). */
  async startDialog(expression: string): Promise<void> {
    await this.evaluate(`setTimeout(() => { ${expression} }, 50); true`);
  }

  /** The element's centre as fractions of the viewport: where a viewer clicks on the picture. */
  async centreOf(selector: string): Promise<{ x: number; y: number }> {
    return this.evaluate<{ x: number; y: number }>(
      `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
        return { x: (r.left + r.width / 2) / innerWidth, y: (r.top + r.height / 2) / innerHeight }; })()`,
    );
  }

  async close(): Promise<void> {
    await this.cdp.close();
  }
}

/** The browser's page targets. */
export async function pagesOf(cdpEndpoint: string): Promise<Array<{ targetId: string; url: string }>> {
  const cdp = await CdpConnection.connect(cdpEndpoint);
  try {
    return (await cdp.listPages()).map((p) => ({ targetId: p.targetId, url: p.url }));
  } finally {
    await cdp.close();
  }
}

export async function closeTarget(cdpEndpoint: string, targetId: string): Promise<void> {
  const cdp = await CdpConnection.connect(cdpEndpoint);
  try {
    await cdp.closeTab(targetId);
  } finally {
    await cdp.close();
  }
}

export type ViewerMessage = Record<string, unknown> & { type: string };

/** A live-view client as the console would be: JSON messages and binary JPEG frames. */
export class ViewerClient {
  readonly messages: ViewerMessage[] = [];
  readonly frames: Buffer[] = [];
  /** When each frame arrived (`performance.now()`), in step with `frames`. */
  readonly frameTimes: number[] = [];
  closeCode?: number;
  private readonly listeners = new Set<() => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.frames.push(data);
        this.frameTimes.push(performance.now());
      }
      else this.messages.push(JSON.parse(String(data)) as ViewerMessage);
      this.notify();
    });
    socket.on('close', (code) => {
      this.closeCode = code;
      this.notify();
    });
    socket.on('error', () => undefined);
  }

  /** Connects, or rejects with the refusal's status and `{code, message}`. */
  static connect(url: string): Promise<ViewerClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new ViewerClient(socket)));
      socket.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += String(c)));
        res.on('end', () => reject(Object.assign(new Error(`refused: ${res.statusCode} ${body}`), { status: res.statusCode, body: JSON.parse(body || '{}') })));
      });
      socket.once('error', reject);
    });
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** The first message from `from` on that matches. */
  async next(predicate: (m: ViewerMessage) => boolean, from = 0, timeoutMs = 20_000): Promise<ViewerMessage> {
    let found: ViewerMessage | undefined;
    await this.until(() => (found = this.messages.slice(from).find(predicate)) !== undefined, timeoutMs, () => `a matching message; got ${JSON.stringify(this.messages.slice(from)).slice(0, 1500)}`);
    return found as ViewerMessage;
  }

  async nextOfType(type: string, from = 0, timeoutMs?: number): Promise<ViewerMessage> {
    return this.next((m) => m.type === type, from, timeoutMs);
  }

  /** Waits until at least `count` frames arrived in all. */
  async frameCount(count: number, timeoutMs = 20_000): Promise<Buffer> {
    await this.until(() => this.frames.length >= count, timeoutMs, () => `${count} frames (have ${this.frames.length})`);
    return this.frames[this.frames.length - 1];
  }

  async closed(timeoutMs = 20_000): Promise<number> {
    await this.until(() => this.closeCode !== undefined, timeoutMs, () => 'the socket to close');
    return this.closeCode as number;
  }

  /** Lets `ms` pass; returns the messages that arrived meanwhile. */
  async quietFor(ms: number): Promise<ViewerMessage[]> {
    const before = this.messages.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.messages.slice(before);
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** `what` is read when the wait fails, so it can describe what had arrived by then. */
  private until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what()}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }
}

/** Whether bytes are a JPEG (SOI marker and the first marker after it). */
export function isJpeg(bytes: Buffer): boolean {
  return bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}
