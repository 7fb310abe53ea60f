import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testRedisUrl } from '@stageflow/testing';
import { freePort, type Harness, waitFor } from './runner.harness';

/**
 * The real services as their own node processes (main.ts through swc), for
 * tests that kill or restart them: a runner, browser-host.
 */
const ROOT = resolve(__dirname, '../../../..');

export interface RunnerProcessOptions {
  /** Collects the runner's JSON log lines (log level info); else level warn and no capture. */
  logs?: string[];
  /** Extra environment (e.g. STAGEFLOW_BROWSER_HOST_URL). */
  env?: Record<string, string>;
}

/** The runner entry point (apps/runner/src/main.ts) with the default stall settings, on the harness's Redis and work dir. */
export function spawnRunner(h: Harness, healthPort: number, options: RunnerProcessOptions = {}): ChildProcess {
  const { logs } = options;
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/runner/src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      HOME: process.env['HOME'],
      SWC_NODE_PROJECT: 'tsconfig.base.json',
      STAGEFLOW_REDIS_URL: h.config.redis.url,
      STAGEFLOW_REDIS_PREFIX: h.config.redis.prefix,
      STAGEFLOW_WORK_DIR: h.config.workDir,
      STAGEFLOW_HOME: h.config.workDir,
      STAGEFLOW_RUNNER_HEALTH_PORT: String(healthPort),
      STAGEFLOW_LOG_LEVEL: logs ? 'info' : 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => logs?.push(...chunk.split('\n').filter(Boolean)));
  child.stderr?.resume();
  return child;
}

/** Resolves with how the child ended (at once if it already has). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((done) => child.once('exit', (code, signal) => done({ code, signal })));
}

export interface BrowserHostProcess {
  url: string;
  /** Its Stageflow home (config.yaml, profiles, audit.jsonl). */
  home: string;
  /** Its temp root (home, throw-away profiles, runtime dir), removed by stop(); tests may put files here. */
  root: string;
  hostId: string;
  /** Chromium browser processes (not helpers) this browser-host started. */
  browsers(): Promise<Array<{ pid: number; browserId: string }>>;
  /** SIGTERM (bounded wait), then SIGKILL of any browser it left, then its folders. */
  stop(): Promise<void>;
}

/** browser-host (apps/browser-host/src/main.ts) with a home, host id and temp root of its own, on `prefix`; `env` adds settings. */
export async function startBrowserHost(prefix: string, configYaml = '', env: Record<string, string> = {}): Promise<BrowserHostProcess> {
  const root = await mkdtemp(join(tmpdir(), 'sf-bhost-'));
  const home = join(root, 'home');
  await mkdir(home, { recursive: true, mode: 0o700 });
  await writeFile(join(home, 'config.yaml'), configYaml);
  const hostId = `it-${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
    cwd: ROOT,
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
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('browser-host to answer /health', async () => (await fetch(`${url}/health`).catch(() => undefined))?.status === 200, 90_000);
  const browsers = () => browsersOf(hostId);
  return {
    url,
    home,
    root,
    hostId,
    browsers,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = exited(child);
        child.kill('SIGTERM');
        await Promise.race([gone, new Promise((done) => setTimeout(done, 15_000))]);
      }
      for (const { pid } of await browsers()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone.
        }
      }
      await rm(root, { recursive: true, force: true });
    },
  };
}

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
