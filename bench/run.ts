/**
 * Dispatch benchmark: a chain of N no-op `run` stages (`true`) through the
 * engine and a real runner, against N raw BullMQ jobs whose processor spawns
 * the same command, one after the other, in one process and one Redis.
 * Raw and engine chains alternate for a few rounds (same load for both).
 * Prints p50/p95 of the time per stage, the engine's overhead per stage
 * (engine minus raw) and the ratio; writes JSON to bench/results/.
 *
 *   npm run bench                                   # starts a Redis with testcontainers
 *   STAGEFLOW_BENCH_REDIS_URL=redis://127.0.0.1:6379 npm run bench
 *   STAGEFLOW_BENCH_STAGES=500 npm run bench
 *
 * `npm run bench` runs every bench (dispatch, lease, browser, memory, live-view, container) on
 * one Redis; `npm run bench -- dispatch|lease|browser|memory|live-view|container|all` picks one.
 * See bench/README.md.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Job, Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GenericContainer, StartedTestContainer, Wait } from 'testcontainers';
import type { RunnerConfig } from '@stageflow/config';
import { isTerminalRunState, RunEvent } from '@stageflow/contracts';
import { EVENT_TAIL_FACTORY, EventTailFactory, RUNS_API, RunsApi } from '@stageflow/engine';
import type { Pipeline, StageDefinition } from '@stageflow/pipeline';
import { RunnerModule } from '../apps/runner/src/app/runner.module';

const STAGES = Number(process.env['STAGEFLOW_BENCH_STAGES'] ?? 200);
const WARMUP = 20;
/** Raw and engine chains alternate, so both see the same machine load. */
const ROUNDS = Number(process.env['STAGEFLOW_BENCH_ROUNDS'] ?? 3);
const TARGET_P50_MS = 10;

interface Stats {
  p50: number;
  p95: number;
  mean: number;
  /** Sum over all rounds. */
  totalMs: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(samples.reduce((a, b) => a + b, 0) / samples.length),
    totalMs: round(samples.reduce((a, b) => a + b, 0)),
  };
}

function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

/** Raw BullMQ: job i+1 is added when job i's processor has spawned `true`; per-job time between completions. */
async function rawChain(url: string, prefix: string, count: number): Promise<number[]> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const workerConnection = connection.duplicate({ maxRetriesPerRequest: null });
  const queue = new Queue('raw', { connection, prefix });
  const done: number[] = [];
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const worker = new Worker(
    'raw',
    async (job: Job<{ i: number }>) => {
      await spawnTrue();
      done.push(performance.now());
      if (job.data.i + 1 < count) await queue.add('step', { i: job.data.i + 1 }, { removeOnComplete: true });
      else finish();
    },
    { connection: workerConnection, prefix, concurrency: 1 },
  );
  await worker.waitUntilReady();
  const start = performance.now();
  await queue.add('step', { i: 0 }, { removeOnComplete: true });
  await finished;
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  workerConnection.disconnect();
  connection.disconnect();
  return [done[0] - start, ...done.slice(1).map((t, i) => t - done[i])];
}

function chainPipeline(count: number): Pipeline {
  const stages: StageDefinition[] = Array.from({ length: count }, (_, i) => ({
    id: `s${i}`,
    kind: 'run',
    command: 'true',
    env: {},
    timeoutSeconds: 600,
    retries: 0,
  }));
  return {
    version: 1,
    name: 'bench-chain',
    maxActiveStages: 4,
    stages,
    edges: stages.slice(1).map((s, i) => ({ from: stages[i].id, to: s.id })),
  };
}

/** The engine: one run of `count` chained stages; per-stage time between consecutive stage ends. */
async function engineChain(runs: RunsApi, tails: EventTailFactory, count: number): Promise<number[]> {
  const tail = tails();
  try {
    const start = Date.now();
    const run = await runs.startRun({ pipeline: chainPipeline(count), input: {} });
    // Wait on the run's event stream (a blocking read), not by polling the run:
    // polling 200 stage hashes would load the process being measured.
    let seq = 0;
    let ended = false;
    while (!ended) {
      for (const event of await tail.tailRun(run.id, seq, 1000)) {
        seq = event.seq;
        if (event.type === 'run.state' && isTerminalRunState((event as RunEvent<'run.state'>).data.state)) ended = true;
      }
    }
    const view = await runs.getRun(run.id);
    if (view.state !== 'success') throw new Error(`bench run ended ${view.state}: ${view.reason}`);
    // Stage end times come from the engine's clock (ms resolution).
    const ends = view.stages.map((s) => Date.parse(s.endedAt as string));
    return [ends[0] - start, ...ends.slice(1).map((t, i) => t - ends[i])];
  } finally {
    await tail.close();
  }
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}

async function runDispatchBench(url: string): Promise<void> {
  const prefix = `sfbench-${randomBytes(3).toString('hex')}:`;
  const workDir = await mkdtemp(join(tmpdir(), 'sf-bench-'));
  const config: RunnerConfig = {
    redis: { url, prefix },
    logLevel: 'error',
    home: workDir,
    concurrency: 4,
    workDir,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    healthPort: 0,
    abandonCheckMs: 60000,
    browserHostUrl: 'http://127.0.0.1:3002',
    artifactsRoot: join(workDir, 'artifacts'),
    artifactMaxBytes: 64 * 1024 * 1024,
  };

  @Module({ imports: [RunnerModule.forRoot(config, { sweep: false, health: false })] })
  class BenchModule {}
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  try {
    const runs = app.get<RunsApi>(RUNS_API);
    const tails = app.get<EventTailFactory>(EVENT_TAIL_FACTORY);
    // Warm up both paths (JIT, Lua script cache, connections).
    await rawChain(url, `${prefix}raw-warm`, WARMUP);
    await engineChain(runs, tails, WARMUP);

    const rawSamples: number[] = [];
    const engineSamples: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rawSamples.push(...(await rawChain(url, `${prefix}raw${round}`, STAGES)));
      engineSamples.push(...(await engineChain(runs, tails, STAGES)));
    }
    const raw = stats(rawSamples);
    const engine = stats(engineSamples);
    const overhead = {
      p50: Math.round((engine.p50 - raw.p50) * 100) / 100,
      p95: Math.round((engine.p95 - raw.p95) * 100) / 100,
    };
    const ratio = Math.round((engine.p50 / raw.p50) * 100) / 100;
    const result = {
      benchmark: 'dispatch',
      date: new Date().toISOString(),
      node: process.version,
      stages: STAGES,
      rounds: ROUNDS,
      command: 'true',
      raw,
      engine,
      overheadPerStageMs: overhead,
      ratioP50: ratio,
      targetP50OverheadMs: TARGET_P50_MS,
      withinTarget: overhead.p50 <= TARGET_P50_MS,
    };
    const table = [
      ['', 'p50 ms', 'p95 ms', 'mean ms', 'total ms'],
      ['raw BullMQ job', raw.p50, raw.p95, raw.mean, raw.totalMs],
      ['engine stage', engine.p50, engine.p95, engine.mean, engine.totalMs],
      ['overhead', overhead.p50, overhead.p95, '', ''],
    ];
    for (const row of table) console.log(row.map((c) => String(c).padStart(16)).join(''));
    console.log(`ratio (engine p50 / raw p50): ${ratio}x; target ≤ ${TARGET_P50_MS} ms added per stage at p50: ${result.withinTarget ? 'met' : 'MISSED'}`);
    const dir = join(__dirname, 'results');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `dispatch-${result.date.replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${file}`);
  } finally {
    await app.close();
    await deleteKeys(url, prefix);
    await rm(workDir, { recursive: true, force: true });
  }
}

const BENCHES = ['dispatch', 'lease', 'browser', 'memory', 'live-view', 'container'] as const;
type BenchName = (typeof BENCHES)[number];

/**
 * `bench/run.ts [dispatch|lease|browser|memory|live-view|container|all]` (default all: in that
 * order, one Redis for all of them; the container bench needs none). Each bench
 * prints its table and writes its own JSON.
 */
async function main(): Promise<void> {
  const arg = process.argv[2] ?? 'all';
  if (arg !== 'all' && !(BENCHES as readonly string[]).includes(arg)) {
    throw new Error(`unknown bench "${arg}"; use one of ${BENCHES.join(', ')} or all`);
  }
  const selected: BenchName[] = arg === 'all' ? [...BENCHES] : [arg as BenchName];
  let container: StartedTestContainer | undefined;
  let url = process.env['STAGEFLOW_BENCH_REDIS_URL'] ?? '';
  if (!url && selected.some((name) => name !== 'container')) {
    process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
    container = await new GenericContainer('redis:7-bookworm')
      .withCommand(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'])
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start();
    url = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
  }
  try {
    for (const name of selected) {
      if (selected.length > 1) console.log(`\n== ${name} ==`);
      // Loaded on demand: a bench's imports (Nest apps, Chromium helpers) cost nothing when it is not run.
      if (name === 'dispatch') await runDispatchBench(url);
      if (name === 'lease') await (await import('./lease.bench')).runLeaseBench(url);
      if (name === 'browser') await (await import('./browser.bench')).runBrowserBench(url);
      if (name === 'memory') await (await import('./memory.bench')).runMemoryBench(url);
      if (name === 'live-view') await (await import('./live-view.bench')).runLiveViewBench(url);
      if (name === 'container') await (await import('./container.bench')).runContainerBench();
    }
  } finally {
    await container?.stop({ timeout: 2000 });
  }
}

main().then(
  // Nest apps and ioredis clients of the benches are closed; exit even if a stray handle lingers.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
