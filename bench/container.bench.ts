/**
 * Container start benchmark: cold start of a shared browser to a usable tab, three
 * ways, interleaved round by round (same machine load for all three):
 *
 *   SWC_NODE_PROJECT=tsconfig.base.json node -r @swc-node/register bench/run.ts container
 *
 * 1. container adapter: `ContainerChromeAdapter.launch` on a new profile (its volume
 *    is created), headless, then connect + `Target.createTarget` + attach.
 * 2. raw `docker run`: the docker CLI with the same image, flags, limits, network and
 *    a new named volume (`docker run -d … -p 127.0.0.1::9223`), `docker port`, poll
 *    `/json/version` every 10 ms, connect + createTarget + attach.
 * 3. local adapter: `LocalChromeAdapter.launch` on a new profile folder (Chromium on
 *    the Host, for scale), connect + createTarget + attach.
 *
 * Every container, volume and folder is removed after its sample (not timed), and
 * the bench's network at the end. Needs Docker and the sandbox image (built first if
 * missing). Env: STAGEFLOW_BENCH_CONTAINER_N (6, after one warm-up of each).
 * JSON: bench/results/container-<timestamp>.json.
 */
import { ContainerChromeAdapter, LocalChromeAdapter, SANDBOX, type LaunchedBrowser } from '@stageflow/browser-hosts';
import { browserVersion, CdpConnection } from '@stageflow/cdp';
import { BROWSER_SANDBOX_IMAGE, docker, ensureBrowserSandboxImage, removeDockerLeftovers } from '@stageflow/testing';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ratio, stats, writeResult, type Stats } from './browser.bench';

const N = Number(process.env['STAGEFLOW_BENCH_CONTAINER_N'] ?? 6);
const TARGET = 1.2;
const MIB = 1024 * 1024;
const LIMITS = { shmSizeBytes: 1024 * MIB, memoryBytes: 1024 * MIB, pidsLimit: 512 };

interface Sample {
  total: number;
  /** Launch until the debugging port answers (adapter: `launch()`; raw: run + port + /json/version). */
  start: number;
  /** connect + createTarget + attach. */
  tab: number;
}

/** What a usable tab costs once the browser answers: one connection, a new tab, attached. */
async function openTab(wsEndpoint: string): Promise<void> {
  const cdp = await CdpConnection.connect(wsEndpoint, { callTimeoutMs: 30_000 });
  try {
    await cdp.attachToTab(await cdp.createTab('about:blank'));
  } finally {
    await cdp.close();
  }
}

async function timed(start: () => Promise<string>): Promise<Sample> {
  const t0 = performance.now();
  const wsEndpoint = await start();
  const t1 = performance.now();
  await openTab(wsEndpoint);
  const t2 = performance.now();
  return { total: t2 - t0, start: t1 - t0, tab: t2 - t1 };
}

export interface ContainerBenchResult {
  benchmark: 'container';
  date: string;
  node: string;
  image: string;
  n: number;
  rawDockerRun: Stats;
  containerAdapter: Stats;
  localAdapter: Stats;
  ratioP50: number;
  ratioP95: number;
  localRatioP50: number;
  targetRatioP50: number;
  withinTarget: boolean;
  subSteps: Record<string, Stats>;
}

export async function runContainerBench(): Promise<ContainerBenchResult> {
  await ensureBrowserSandboxImage();
  const tag = randomBytes(3).toString('hex');
  const hostId = `bench-${tag}`;
  const network = `sf-browsers-${hostId}`;
  const work = await mkdtemp(join(tmpdir(), 'sf-bench-container-'));
  const containerAdapter = new ContainerChromeAdapter({ image: BROWSER_SANDBOX_IMAGE, hostId, ...LIMITS });
  const localAdapter = new LocalChromeAdapter({ hostId, xvfb: false, throwawayRoot: join(work, 'throwaway') });
  const volumes: string[] = [];
  let seq = 0;

  const adapterOnce = async (): Promise<Sample> => {
    const profile = `bench-${tag}-${seq++}`;
    volumes.push(`sf-profile-local-${profile}`);
    let browser: LaunchedBrowser | undefined;
    const sample = await timed(async () => {
      browser = await containerAdapter.launch({ browserId: `sb-${profile}`, owner: { runId: `run-${profile}`, scope: 'local', profile }, headed: false, launchArgs: [] });
      return browser.wsEndpoint;
    });
    await browser?.close();
    await docker('volume', 'rm', `sf-profile-local-${profile}`);
    return sample;
  };

  const rawOnce = async (): Promise<Sample> => {
    const name = `sf-bench-raw-${tag}-${seq++}`;
    volumes.push(name);
    const sample = await timed(async () => {
      // The container adapter's own spec, written as docker run flags.
      await docker(
        'run', '-d', '--name', name, '--label', `stageflow.host=${hostId}`,
        '--user', SANDBOX.user, '--read-only', '--tmpfs', `/tmp:${SANDBOX.tmpfs}`,
        '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges:true',
        '--pids-limit', String(LIMITS.pidsLimit), '--memory', String(LIMITS.memoryBytes), '--memory-swap', String(LIMITS.memoryBytes),
        '--shm-size', String(LIMITS.shmSizeBytes), '--network', network, '-p', `127.0.0.1::${SANDBOX.relayPort}`,
        '-e', 'STAGEFLOW_XVFB=0', '--mount', `type=volume,source=${name},target=${SANDBOX.profileMount}`,
        BROWSER_SANDBOX_IMAGE,
        '--deny-permission-prompts', '--password-store=basic', '--disable-sync', '--disable-background-networking',
        '--disable-component-update', '--no-first-run', `--user-data-dir=${SANDBOX.profileMount}`,
        `--remote-debugging-port=${SANDBOX.cdpPort}`, '--headless=new', '--no-sandbox', 'about:blank',
      );
      const port = Number((await docker('port', name, `${SANDBOX.relayPort}/tcp`)).split('\n')[0].split(':').pop());
      const deadline = Date.now() + 30_000;
      for (;;) {
        const version = await browserVersion(port, { timeoutMs: 1000 }).catch(() => undefined);
        if (version) return `ws://127.0.0.1:${port}${new URL(version.webSocketDebuggerUrl).pathname}`;
        if (Date.now() > deadline) throw new Error(`raw container ${name} never answered`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await docker('rm', '-f', '-v', name);
    await docker('volume', 'rm', name);
    return sample;
  };

  const localOnce = async (): Promise<Sample> => {
    let browser: LaunchedBrowser | undefined;
    const userDataDir = join(work, `local-${seq++}`);
    const sample = await timed(async () => {
      browser = await localAdapter.launch({ browserId: `lb-${tag}-${seq}`, userDataDir, headed: false, launchArgs: [] });
      return browser.wsEndpoint;
    });
    await browser?.close();
    await rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    return sample;
  };

  try {
    // Warm-up (image layers in the page cache, the network, JIT); the adapter creates the network.
    await adapterOnce();
    await rawOnce();
    await localOnce();
    const samples = { adapter: [] as Sample[], raw: [] as Sample[], local: [] as Sample[] };
    const order: Array<keyof typeof samples> = ['adapter', 'raw', 'local'];
    const once = { adapter: adapterOnce, raw: rawOnce, local: localOnce };
    for (let i = 0; i < N; i++) {
      // Rotate who goes first, so no path always runs on a machine just warmed by another.
      for (const key of [...order.slice(i % 3), ...order.slice(0, i % 3)]) samples[key].push(await once[key]());
    }
    const raw = stats(samples.raw.map((s) => s.total));
    const adapter = stats(samples.adapter.map((s) => s.total));
    const local = stats(samples.local.map((s) => s.total));
    const result: ContainerBenchResult = {
      benchmark: 'container',
      date: new Date().toISOString(),
      node: process.version,
      image: BROWSER_SANDBOX_IMAGE,
      n: N,
      rawDockerRun: raw,
      containerAdapter: adapter,
      localAdapter: local,
      ratioP50: ratio(adapter.p50, raw.p50),
      ratioP95: ratio(adapter.p95, raw.p95),
      localRatioP50: ratio(adapter.p50, local.p50),
      targetRatioP50: TARGET,
      withinTarget: ratio(adapter.p50, raw.p50) <= TARGET,
      subSteps: {
        'raw docker run: run + port + /json/version (10 ms poll)': stats(samples.raw.map((s) => s.start)),
        'raw docker run: connect + createTarget + attach': stats(samples.raw.map((s) => s.tab)),
        'container adapter: launch() (volume, create, start, relay answers)': stats(samples.adapter.map((s) => s.start)),
        'container adapter: connect + createTarget + attach': stats(samples.adapter.map((s) => s.tab)),
        'local adapter: launch() (spawn, DevToolsActivePort, /json/version)': stats(samples.local.map((s) => s.start)),
        'local adapter: connect + createTarget + attach': stats(samples.local.map((s) => s.tab)),
      },
    };
    const row = (label: string, s: Stats) => `${label.padEnd(68)}${String(s.p50).padStart(10)}${String(s.p95).padStart(10)}${String(s.n).padStart(6)}`;
    console.log(
      [
        `container bench: cold start to a usable tab (new profile, headless), N=${N} each, interleaved`,
        `${''.padEnd(68)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'n'.padStart(6)}`,
        row('raw docker run (same image, flags, limits, network)', raw),
        row('container adapter', adapter),
        row('local adapter (Chromium on the Host)', local),
        `ratio container adapter/raw docker run: p50 ${result.ratioP50}x, p95 ${result.ratioP95}x; target p50 ≤ ${TARGET}x: ${result.withinTarget ? 'met' : 'MISSED'}`,
        `ratio container adapter/local adapter: p50 ${result.localRatioP50}x (the price of the container)`,
        '  sub-steps:',
        ...Object.entries(result.subSteps).map(([k, v]) => row(`  ${k}`, v)),
      ].join('\n'),
    );
    console.log(`wrote ${await writeResult('container', result)}`);
    return result;
  } finally {
    await containerAdapter.closeAll();
    await localAdapter.closeAll();
    await removeDockerLeftovers({ hostId, volumes, networks: [network] });
    await rm(work, { recursive: true, force: true });
  }
}
