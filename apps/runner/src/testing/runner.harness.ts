import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { readFileSync } from 'node:fs';
import { AddressInfo, createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunnerConfig } from '@stageflow/config';
import { RedisKeys, RunEvent, RunState, isTerminalRunState } from '@stageflow/contracts';
import {
  AbandonSweeper,
  EngineModule,
  EVENT_TAIL_FACTORY,
  EventTailFactory,
  RUNS_API,
  RunsApi,
  RunView,
  StageQueue,
} from '@stageflow/engine';
import type { EdgeDefinition, Pipeline, StageDefinition } from '@stageflow/pipeline';
import { testRedisUrl, uniquePrefix, waitFor } from '@stageflow/testing';
import { RunnerModule } from '../app/runner.module';
import type { RunnerOptions } from '../app/runner.options';
import { StageWorker } from '../app/stage/stage-worker.service';

/**
 * A runner (or, with `worker: false`, only the engine) in this process,
 * against the integration Redis under a key prefix of its own. `close()`
 * stops it, deletes its keys and its work dir.
 */
export interface Harness {
  app: INestApplicationContext;
  runs: RunsApi;
  tails: EventTailFactory;
  sweeper: AbandonSweeper;
  queue: StageQueue;
  keys: RedisKeys;
  /** A plain connection for inspecting Redis. */
  redis: Redis;
  config: RunnerConfig;
  worker?: StageWorker;
  close(): Promise<void>;
}

export interface HarnessOptions {
  redisUrl?: string;
  prefix?: string;
  workDir?: string;
  worker?: boolean;
  runner?: RunnerOptions;
  config?: Partial<RunnerConfig>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const prefix = options.prefix ?? uniquePrefix();
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'sf-runner-')));
  const config: RunnerConfig = {
    redis: { url: options.redisUrl ?? testRedisUrl(), prefix },
    logLevel: 'warn',
    home: workDir,
    concurrency: 4,
    workDir,
    lockDurationMs: 5000,
    stalledIntervalMs: 5000,
    healthPort: 0,
    abandonCheckMs: 60000,
    browserHostUrl: 'http://127.0.0.1:3002',
    artifactsRoot: join(workDir, 'artifacts'),
    artifactMaxBytes: 8 * 1024 * 1024,
    ...options.config,
  };
  const runner: RunnerOptions = { sweep: false, health: false, killGraceMs: 500, watchMs: 500, ...options.runner };

  @Module({
    imports: [
      options.worker === false ? EngineModule.forRoot(config.redis, runner.engine) : RunnerModule.forRoot(config, runner),
    ],
  })
  class HarnessModule {}

  const app = await NestFactory.createApplicationContext(HarnessModule, { logger: ['error', 'warn'] });
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: null });
  const keys = new RedisKeys(prefix);
  return {
    app,
    runs: app.get<RunsApi>(RUNS_API),
    tails: app.get<EventTailFactory>(EVENT_TAIL_FACTORY),
    sweeper: app.get(AbandonSweeper),
    queue: app.get(StageQueue),
    keys,
    redis,
    config,
    worker: options.worker === false ? undefined : app.get(StageWorker),
    async close() {
      await app.close();
      await deleteKeys(redis, prefix);
      redis.disconnect();
      if (!options.workDir) await rm(workDir, { recursive: true, force: true });
    },
  };
}

export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (found.length) await redis.del(...found);
  } while (cursor !== '0');
}

/** The shared poller (`@stageflow/testing`), re-exported for this harness's tests. */
export { waitFor };

export function waitForRun(
  runs: RunsApi,
  runId: string,
  states: readonly RunState[] | 'ended' = 'ended',
  timeoutMs = 30000,
): Promise<RunView> {
  return waitFor(
    `run ${runId} to be ${states === 'ended' ? 'ended' : states.join(' or ')}`,
    async () => {
      const run = await runs.getRun(runId);
      const ok = states === 'ended' ? isTerminalRunState(run.state) : states.includes(run.state);
      return ok ? run : undefined;
    },
    timeoutMs,
  );
}

export async function allEvents(runs: RunsApi, runId: string): Promise<RunEvent[]> {
  return runs.readEvents(runId, 0, 1000);
}

export function runStage(id: string, command: string | string[], extra: Partial<StageDefinition> = {}): StageDefinition {
  return { id, kind: 'run', command, env: {}, timeoutSeconds: 60, retries: 0, ...extra } as StageDefinition;
}

export function gateStage(id: string, message: string): StageDefinition {
  return { id, kind: 'gate', message, timeoutSeconds: 60, retries: 0 };
}

export function pipelineOf(stages: StageDefinition[], edges: EdgeDefinition[], maxActiveStages = 4, name = 'test'): Pipeline {
  return { version: 1, name, maxActiveStages, stages, edges };
}

/** Shell snippet: copy the stage's input to its output. */
export const ECHO_INPUT = 'cat "$STAGEFLOW_INPUT" > "$STAGEFLOW_OUTPUT"';

/** True while `pid` runs (a zombie, killed but not yet reaped, counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** GET http://127.0.0.1:<port><path>: status and parsed body (status 0 when nothing answers). */
export async function getJson(port: number, path: string, timeoutMs = 3000): Promise<{ status: number; body: unknown }> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: await res.json() };
  } catch {
    return { status: 0, body: undefined };
  }
}
