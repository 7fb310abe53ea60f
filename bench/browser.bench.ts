/**
 * Browser stage-start benchmarks: browser-host's stage sessions against raw CDP on
 * the same Chromium, interleaved round by round (same machine load for both).
 *
 *   SWC_NODE_PROJECT=tsconfig.base.json node -r @swc-node/register bench/run.ts browser
 *
 * 1. Warm stage start (the run's shared browser is already up):
 *    Stageflow = `POST /internal/sessions` on browser-host's loopback HTTP port, then
 *    `Target.attachToTarget(flatten)` on the returned tab (over a CDP connection the
 *    bench keeps open, like a stage's agent-browser daemon would).
 *    Raw = `Target.createTarget` + `Target.attachToTarget(flatten)` over one CDP
 *    connection to the same browser. Tabs are closed between samples (not timed).
 * 2. Cold first browser stage of a new run on a new profile:
 *    Stageflow = lease acquire + `POST /internal/sessions` (launches headless Chromium
 *    with the Host's switches) + connect + attach.
 *    Raw = spawn `/usr/bin/chromium` with the same switches and a fresh
 *    `--user-data-dir`, read DevToolsActivePort, connect, createTarget + attach.
 *    Every browser and temp folder is removed after its sample (not timed).
 *
 * Sub-steps are measured too (in separate, untimed-for-the-ratio calls) so a missed
 * target says where the time goes. Env: STAGEFLOW_BENCH_WARM_N (30),
 * STAGEFLOW_BENCH_COLD_N (6). JSON: bench/results/browser-<timestamp>.json.
 */
import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { CdpConnection, readDevToolsActivePort } from '@stageflow/cdp';
import { HOST_SWITCHES } from '@stageflow/browser-hosts';
import type { StageSession } from '@stageflow/contracts';
import { RUNS_API, type RunsApi } from '@stageflow/engine';
import { ProfileLeases } from '@stageflow/leases';
import type { Pipeline } from '@stageflow/pipeline';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { StageSessions } from '../apps/browser-host/src/app/sessions/stage-sessions.service';
import {
  bootHost,
  chromiumOf,
  deleteKeys,
  hostDirs,
  hostEnv,
  killHostBrowsers,
  removeDirs,
  waitFor,
  type HostDirs,
  type HostInProcess,
} from '../apps/browser-host/src/app/browsers/testing/browser-host.harness';

export const CHROMIUM = '/usr/bin/chromium';
const WARM_N = Number(process.env['STAGEFLOW_BENCH_WARM_N'] ?? 30);
const COLD_N = Number(process.env['STAGEFLOW_BENCH_COLD_N'] ?? 6);
const WARM_TARGET = 1.2;
const COLD_TARGET = 1.3;

// ---------------------------------------------------------------- shared helpers

export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const r = (n: number) => Math.round(n * 100) / 100;
  return { n: samples.length, p50: r(at(0.5)), p95: r(at(0.95)), mean: r(samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length)) };
}

export const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export async function writeResult(name: string, result: { date: string }): Promise<string> {
  const dir = join(__dirname, 'results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}-${result.date.replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** The switches browser-host puts on a headless browser (minus its own markers). */
export function rawChromeArgs(userDataDir: string, url = 'about:blank'): string[] {
  return [
    ...HOST_SWITCHES,
    `--user-data-dir=${userDataDir}`,
    '--remote-debugging-port=0',
    '--headless=new',
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
    url,
  ];
}

export interface RawBrowser {
  pid: number;
  wsEndpoint: string;
  userDataDir: string;
  child: ChildProcess;
  /** spawn → DevToolsActivePort readable. */
  portFileMs: number;
}

/** Spawns Chromium on a fresh profile folder and waits for its DevToolsActivePort. */
export async function launchRaw(url = 'about:blank'): Promise<RawBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'sf-bench-raw-'));
  const t0 = performance.now();
  // The environment LocalChromeAdapter gives its browsers (a system PATH and HOME only).
  const env = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: homedir() };
  const child = spawn(CHROMIUM, rawChromeArgs(userDataDir, url), { detached: true, stdio: 'ignore', env });
  const exited = new AbortController();
  child.once('exit', () => exited.abort(new Error('chromium exited during launch')));
  const port = await readDevToolsActivePort(userDataDir, { timeoutMs: 30_000, pollMs: 10, signal: exited.signal });
  return { pid: child.pid as number, wsEndpoint: port.wsEndpoint, userDataDir, child, portFileMs: performance.now() - t0 };
}

/** Graceful close (Browser.close), SIGKILL of the group if it lingers, then the folder. */
export async function closeRaw(b: RawBrowser): Promise<void> {
  const gone = new Promise<void>((resolve) => {
    if (b.child.exitCode !== null || b.child.signalCode !== null) resolve();
    else b.child.once('exit', () => resolve());
  });
  try {
    const cdp = await CdpConnection.connect(b.wsEndpoint, { connectTimeoutMs: 2000, callTimeoutMs: 2000 });
    await cdp.send('Browser.close').catch(() => undefined);
    await cdp.close().catch(() => undefined);
  } catch {
    // Already gone.
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-b.pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }, 5000);
  await gone;
  clearTimeout(timer);
  await rm(b.userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** A browser-host in this process, listening on 127.0.0.1:<ephemeral>, with its own home, host id and key prefix. */
export interface BenchHost {
  dirs: HostDirs;
  host: HostInProcess;
  app: INestApplication;
  base: string;
  runs: RunsApi;
  leases: ProfileLeases;
  close(): Promise<void>;
}

export async function startBenchHost(redisUrl: string): Promise<BenchHost> {
  const dirs = await hostDirs('browser: {}\n');
  const host = await bootHost(hostEnv(dirs, redisUrl, { STAGEFLOW_LOG_LEVEL: 'error' }));
  await host.app.listen(0, '127.0.0.1');
  const { port } = host.app.getHttpServer().address() as AddressInfo;
  return {
    dirs,
    host,
    app: host.app,
    base: `http://127.0.0.1:${port}`,
    runs: host.app.get<RunsApi>(RUNS_API),
    leases: host.app.get(ProfileLeases),
    close: async () => {
      await host.app.close();
      await killHostBrowsers(dirs.hostId);
      await deleteKeys(redisUrl, dirs.prefix);
      await removeDirs(dirs);
    },
  };
}

const runStage = (id: string): Pipeline['stages'][number] => ({ id, kind: 'run', command: 'true', env: {}, timeoutSeconds: 600, retries: 0 });

export async function startBenchRun(h: BenchHost, name: string, stageIds: string[]): Promise<string> {
  const run = await h.runs.startRun({ pipeline: { version: 1, name, maxActiveStages: 4, stages: stageIds.map(runStage), edges: [] }, input: {} });
  return run.id;
}

export async function acquireLease(h: BenchHost, profile: string, runId: string): Promise<number> {
  const grant = await h.leases.acquire('local', profile, runId);
  if (grant.status !== 'granted') throw new Error(`lease on ${profile} not free`);
  return grant.grant.token;
}

export async function openSession(h: BenchHost, body: Record<string, unknown>): Promise<StageSession> {
  const res = await fetch(`${h.base}/internal/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as unknown;
  if (res.status !== 201) throw new Error(`open answered ${res.status}: ${JSON.stringify(json)}`);
  return json as StageSession;
}

export async function closeSession(h: BenchHost, sessionId: string): Promise<void> {
  const res = await fetch(`${h.base}/internal/sessions/${encodeURIComponent(sessionId)}`, { method: 'DELETE' });
  if (res.status !== 204) throw new Error(`close answered ${res.status}`);
}

/** Cancels the run and waits until browser-host's watcher has closed its browser and released its lease. */
export async function endBenchRun(h: BenchHost, runId: string): Promise<void> {
  await h.runs.cancelRun(runId).catch(() => undefined);
  await waitFor('the run\'s browser to close', async () => (await chromiumOf(h.dirs.hostId)).length === 0, 30_000);
}


// ---------------------------------------------------------------- instrumentation

/**
 * Times browser-host's own steps inside `POST /internal/sessions` by wrapping methods
 * of its live providers (instance properties shadow the prototype; product code is
 * not changed). Samples are sequential, so one accumulator per sample is enough.
 */
/** The steps StageSessions.open awaits directly (the others nest inside `runBrowsers.shared`). */
const TOP_LEVEL_STEPS = [
  'readiness.whenReady',
  'runStates.isAlive',
  'leases.assertCurrent',
  'sessionRegistry.get',
  'agents.prepareRunDir',
  'profiles.ensure',
  'profiles.recordUse',
  'runBrowsers.shared',
  'tabs.open',
  'agents.bindTab',
  'sessionRegistry.put',
];

class Steps {
  private current = new Map<string, number>();
  readonly all = new Map<string, number[]>();

  wrap(target: object | undefined, label: string, methods: string[]): void {
    if (!target) return;
    const obj = target as Record<string, unknown>;
    for (const m of methods) {
      const original = obj[m];
      if (typeof original !== 'function') continue;
      obj[m] = async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await (original as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          const key = `${label}.${m}`;
          this.current.set(key, (this.current.get(key) ?? 0) + performance.now() - t0);
        }
      };
    }
  }

  begin(): void {
    this.current = new Map();
  }

  /** Records this sample's step times; steps not hit count as 0 so every list has one entry per sample. */
  end(extra: Record<string, number> = {}): void {
    for (const [k, v] of Object.entries(extra)) this.current.set(k, v);
    const open = this.current.get('service.open');
    if (open !== undefined) {
      // Time inside StageSessions.open that none of its direct steps account for
      // (mutex, sync checks, awaits waiting for the busy event loop / CPU).
      const direct = [...this.current].filter(([k]) => TOP_LEVEL_STEPS.includes(k)).reduce((sum, [, v]) => sum + v, 0);
      this.current.set('service.open: not in a wrapped step', open - direct);
    }
    const keys = new Set([...this.all.keys(), ...this.current.keys()]);
    for (const k of keys) {
      const list = this.all.get(k) ?? [];
      list.push(this.current.get(k) ?? 0);
      this.all.set(k, list);
    }
  }

  reset(): void {
    this.all.clear();
  }

  stats(prefix: string): Record<string, Stats> {
    const out: Record<string, Stats> = {};
    for (const [k, v] of this.all) out[`${prefix}${k}`] = stats(v);
    return out;
  }
}

function instrument(h: BenchHost): Steps {
  const steps = new Steps();
  const field = (o: unknown, name: string) => (o as Record<string, unknown> | undefined)?.[name] as object | undefined;
  const sessions = h.app.get(StageSessions);
  const browsers = field(sessions, 'browsers');
  const processes = field(browsers, 'processes');
  steps.wrap(sessions, 'service', ['open']);
  steps.wrap(field(sessions, 'readiness'), 'readiness', ['whenReady']);
  steps.wrap(field(sessions, 'runs'), 'runStates', ['isAlive']);
  steps.wrap(field(sessions, 'leases'), 'leases', ['assertCurrent']);
  steps.wrap(field(sessions, 'registry'), 'sessionRegistry', ['get', 'put']);
  steps.wrap(field(sessions, 'agents'), 'agents', ['prepareRunDir', 'bindTab']);
  steps.wrap(field(sessions, 'profiles'), 'profiles', ['ensure', 'recordUse', 'folder']);
  steps.wrap(field(sessions, 'tabs'), 'tabs', ['open']);
  steps.wrap(browsers, 'runBrowsers', ['shared', 'register', 'rememberToken']);
  steps.wrap(processes, 'processes', ['isResponsive', 'launchShared']);
  // The router sends this bench's shared browsers to the local host (browser.host is local).
  steps.wrap(field(field(processes, 'local'), 'adapter'), 'localChromeAdapter', ['launch']);
  return steps;
}

// ---------------------------------------------------------------- benches

interface WarmResult {
  raw: Stats;
  stageflow: Stats;
  ratioP50: number;
  ratioP95: number;
  subSteps: Record<string, Stats>;
}

async function warmBench(h: BenchHost, steps: Steps): Promise<WarmResult> {
  const runId = await startBenchRun(h, 'bench-warm', ['w']);
  const profile = 'bench-warm';
  const leaseToken = await acquireLease(h, profile, runId);
  const body = (attempt: number) => ({ runId, stageId: 'w', attempt, profile, leaseToken, headed: false, allowDomains: [] });
  let attempt = 1;
  // Start the run's shared browser (not measured), then keep one CDP connection for both paths.
  const first = await openSession(h, body(attempt++));
  await closeSession(h, first.sessionId);
  const cdp = await CdpConnection.connect(first.cdpEndpoint, { callTimeoutMs: 30_000 });

  const rawCreate: number[] = [];
  const rawAttach: number[] = [];
  const rawOnce = async () => {
    const t0 = performance.now();
    const targetId = await cdp.createTab('about:blank');
    const tCreate = performance.now();
    await cdp.attachToTab(targetId);
    const t1 = performance.now();
    rawCreate.push(tCreate - t0);
    rawAttach.push(t1 - tCreate);
    await cdp.closeTab(targetId);
    return t1 - t0;
  };
  const sfOnce = async () => {
    steps.begin();
    const t0 = performance.now();
    const s = await openSession(h, body(attempt++));
    const tOpen = performance.now();
    await cdp.attachToTab(s.targetId);
    const t1 = performance.now();
    steps.end({ 'POST /internal/sessions (HTTP round trip)': tOpen - t0, 'attachToTarget on the returned tab': t1 - tOpen });
    await closeSession(h, s.sessionId);
    return t1 - t0;
  };
  // What browser-host's tab adapter does per open: a new WebSocket, createTarget, close.
  const tabAdapterOnce = async () => {
    const t0 = performance.now();
    const c = await CdpConnection.connect(first.cdpEndpoint, { connectTimeoutMs: 5000, callTimeoutMs: 10_000 });
    const tConn = performance.now();
    const targetId = await c.createTab('about:blank');
    const tTab = performance.now();
    await c.close();
    const t1 = performance.now();
    await cdp.closeTab(targetId);
    return { connect: tConn - t0, createTarget: tTab - tConn, wsClose: t1 - tTab, total: t1 - t0 };
  };

  for (let i = 0; i < 3; i++) {
    await rawOnce();
    await sfOnce();
    await tabAdapterOnce();
  }
  steps.reset();
  rawCreate.length = 0;
  rawAttach.length = 0;
  const raw: number[] = [];
  const sf: number[] = [];
  const adapter: Record<string, number[]> = { connect: [], createTarget: [], wsClose: [], total: [] };
  for (let i = 0; i < WARM_N; i++) {
    // Alternate which path goes first within the round.
    if (i % 2 === 0) {
      raw.push(await rawOnce());
      sf.push(await sfOnce());
    } else {
      sf.push(await sfOnce());
      raw.push(await rawOnce());
    }
    const a = await tabAdapterOnce();
    for (const k of Object.keys(adapter)) adapter[k].push(a[k as keyof typeof a]);
  }
  await cdp.close();
  await endBenchRun(h, runId);
  const r = stats(raw);
  const s = stats(sf);
  return {
    raw: r,
    stageflow: s,
    ratioP50: ratio(s.p50, r.p50),
    ratioP95: ratio(s.p95, r.p95),
    subSteps: {
      'raw: createTarget (persistent connection)': stats(rawCreate),
      'raw: attachToTarget': stats(rawAttach),
      ...steps.stats('stageflow: '),
      'tab adapter: connect new WebSocket': stats(adapter['connect']),
      'tab adapter: createTarget': stats(adapter['createTarget']),
      'tab adapter: close WebSocket': stats(adapter['wsClose']),
      'tab adapter: total (inside the POST)': stats(adapter['total']),
    },
  };
}

interface ColdResult {
  raw: Stats;
  stageflow: Stats;
  ratioP50: number;
  ratioP95: number;
  subSteps: Record<string, Stats>;
}

async function coldBench(h: BenchHost, steps: Steps): Promise<ColdResult> {
  const rawOnce = async () => {
    const t0 = performance.now();
    const b = await launchRaw();
    const tPort = performance.now();
    const cdp = await CdpConnection.connect(b.wsEndpoint, { callTimeoutMs: 30_000 });
    const tConn = performance.now();
    const targetId = await cdp.createTab('about:blank');
    await cdp.attachToTab(targetId);
    const t1 = performance.now();
    await cdp.close();
    await closeRaw(b);
    return { total: t1 - t0, portFile: tPort - t0, connect: tConn - tPort, tab: t1 - tConn };
  };
  let seq = 0;
  const sfOnce = async () => {
    const profile = `bench-cold-${process.pid}-${seq++}`;
    const runId = await startBenchRun(h, 'bench-cold', ['c']);
    steps.begin();
    const t0 = performance.now();
    const leaseToken = await acquireLease(h, profile, runId);
    const tLease = performance.now();
    const s = await openSession(h, { runId, stageId: 'c', attempt: 1, profile, leaseToken, headed: false, allowDomains: [] });
    const tOpen = performance.now();
    const cdp = await CdpConnection.connect(s.cdpEndpoint, { callTimeoutMs: 30_000 });
    const tConn = performance.now();
    await cdp.attachToTab(s.targetId);
    const t1 = performance.now();
    steps.end();
    await cdp.close();
    await endBenchRun(h, runId);
    return { total: t1 - t0, lease: tLease - t0, open: tOpen - tLease, connect: tConn - tOpen, attach: t1 - tConn };
  };

  // One warm-up of each (page cache, JIT).
  await rawOnce();
  await sfOnce();
  steps.reset();
  const raw: Array<Awaited<ReturnType<typeof rawOnce>>> = [];
  const sf: Array<Awaited<ReturnType<typeof sfOnce>>> = [];
  for (let i = 0; i < COLD_N; i++) {
    if (i % 2 === 0) {
      raw.push(await rawOnce());
      sf.push(await sfOnce());
    } else {
      sf.push(await sfOnce());
      raw.push(await rawOnce());
    }
  }
  const r = stats(raw.map((x) => x.total));
  const s = stats(sf.map((x) => x.total));
  return {
    raw: r,
    stageflow: s,
    ratioP50: ratio(s.p50, r.p50),
    ratioP95: ratio(s.p95, r.p95),
    subSteps: {
      'raw: spawn -> DevToolsActivePort (10 ms poll)': stats(raw.map((x) => x.portFile)),
      'raw: connect': stats(raw.map((x) => x.connect)),
      'raw: createTarget + attach': stats(raw.map((x) => x.tab)),
      'stageflow: lease acquire': stats(sf.map((x) => x.lease)),
      'stageflow: POST /internal/sessions (launch + tab)': stats(sf.map((x) => x.open)),
      'stageflow: connect': stats(sf.map((x) => x.connect)),
      'stageflow: attach': stats(sf.map((x) => x.attach)),
      ...steps.stats('stageflow: '),
    },
  };
}

function printBlock(title: string, r: WarmResult | ColdResult, target: number): void {
  const row = (label: string, s: Stats) => `${label.padEnd(60)}${String(s.p50).padStart(10)}${String(s.p95).padStart(10)}${String(s.n).padStart(6)}`;
  const lines = [
    title,
    `${''.padEnd(60)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'n'.padStart(6)}`,
    row('raw CDP', r.raw),
    row('stageflow', r.stageflow),
    `ratio stageflow/raw: p50 ${r.ratioP50}x, p95 ${r.ratioP95}x; target p50 ≤ ${target}x: ${r.ratioP50 <= target ? 'met' : 'MISSED'}`,
    '  sub-steps:',
    ...Object.entries(r.subSteps).map(([k, v]) => row(`  ${k}`, v)),
  ];
  console.log(lines.join('\n'));
}

export interface BrowserBenchResult {
  benchmark: 'browser';
  date: string;
  node: string;
  warm: WarmResult & { targetRatioP50: number; withinTarget: boolean };
  cold: ColdResult & { targetRatioP50: number; withinTarget: boolean };
}

export async function runBrowserBench(redisUrl: string): Promise<BrowserBenchResult> {
  const h = await startBenchHost(redisUrl);
  try {
    const steps = instrument(h);
    const warm = await warmBench(h, steps);
    printBlock(`browser bench: warm stage start (shared browser up), N=${WARM_N} each, interleaved`, warm, WARM_TARGET);
    steps.reset();
    const cold = await coldBench(h, steps);
    printBlock(`browser bench: cold first browser stage (new run, new profile), N=${COLD_N} each, interleaved`, cold, COLD_TARGET);
    const result: BrowserBenchResult = {
      benchmark: 'browser',
      date: new Date().toISOString(),
      node: process.version,
      warm: { ...warm, targetRatioP50: WARM_TARGET, withinTarget: warm.ratioP50 <= WARM_TARGET },
      cold: { ...cold, targetRatioP50: COLD_TARGET, withinTarget: cold.ratioP50 <= COLD_TARGET },
    };
    console.log(`wrote ${await writeResult('browser', result)}`);
    return result;
  } finally {
    await h.close();
  }
}

/** Main Chromium pids of a bench host's browsers. */
export async function chromiumPidsOf(hostId: string): Promise<number[]> {
  return (await chromiumOf(hostId)).map((c) => c.pid);
}
