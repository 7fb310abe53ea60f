/**
 * Browser-profile lease latency against raw Redis baselines, on one Redis.
 *
 *   node -r @swc-node/register bench/lease.bench.ts
 *
 * Uses STAGEFLOW_BENCH_REDIS_URL when set, else starts a throw-away Redis with
 * testcontainers. `runLeaseBench(url)` is also called from bench/run.ts.
 *
 * Figures (N iterations each, after a warm-up):
 * - uncontended acquire + release (two script calls) vs raw `SET NX` + `DEL`;
 * - release → next waiter granted, as the engine sees it (the `onGranted` event
 *   in another process's connections) vs raw `PUBLISH` → message.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { GenericContainer, Wait } from 'testcontainers';
import { register } from 'tsconfig-paths';
import type { ProfileLeases } from '../libs/leases/src/lib/profile-leases.service';

/**
 * @swc-node/register looks for ./tsconfig.json, which this workspace does not
 * have: `@stageflow/*` does not resolve and decorators do not compile. So the
 * bench maps the paths of tsconfig.base.json before the libs load (harmless if
 * SWC_NODE_PROJECT did it) and loads the service module, which has no
 * decorators, rather than the lib's index (which carries the Nest module).
 */
function mapWorkspacePaths(): void {
  const root = join(__dirname, '..');
  const base = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  register({ baseUrl: root, paths: base.compilerOptions.paths, addMatchAll: false });
}

export interface LatencyFigures {
  n: number;
  p50Ms: number;
  p95Ms: number;
}

export interface LeaseBenchResult {
  acquireRelease: LatencyFigures;
  rawSetNxDel: LatencyFigures;
  /** acquire+release over raw SET NX + DEL. */
  acquireReleaseRatio: { p50: number; p95: number };
  handoff: LatencyFigures;
  rawPublish: LatencyFigures;
  /** release → waiter granted over raw PUBLISH → message. */
  handoffRatio: { p50: number; p95: number };
  targets: { acquireReleaseP50Ms: number; handoffP50Ms: number };
  meetsTargets: boolean;
}

const N = 500;
const WARMUP = 50;
const TARGET_ACQUIRE_RELEASE_P50_MS = 2;
const TARGET_HANDOFF_P50_MS = 10;
const scope = 'local';
const profile = 'bench';

function ms(from: bigint, to: bigint): number {
  return Number(to - from) / 1e6;
}

function figures(samples: number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { n: sorted.length, p50Ms: round(at(0.5)), p95Ms: round(at(0.95)) };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function ratio(a: LatencyFigures, b: LatencyFigures): { p50: number; p95: number } {
  return { p50: round(a.p50Ms / b.p50Ms), p95: round(a.p95Ms / b.p95Ms) };
}

async function repeat(times: number, once: (i: number) => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push(await once(i));
  return out;
}

function quietRedis(url: string): Redis {
  const redis = new Redis(url);
  redis.on('error', (err: Error) => console.error(`bench redis: ${err.message}`));
  return redis;
}

async function benchAcquireRelease(leases: ProfileLeases): Promise<number[]> {
  const once = async (i: number) => {
    const runId = `ar-${i}`;
    const t0 = process.hrtime.bigint();
    await leases.acquire(scope, profile, runId);
    await leases.release(scope, profile, runId);
    return ms(t0, process.hrtime.bigint());
  };
  await repeat(WARMUP, once);
  return repeat(N, once);
}

async function benchRawSetNxDel(raw: Redis, key: string): Promise<number[]> {
  const once = async () => {
    const t0 = process.hrtime.bigint();
    await raw.set(key, 'bench', 'NX');
    await raw.del(key);
    return ms(t0, process.hrtime.bigint());
  };
  await repeat(WARMUP, once);
  return repeat(N, once);
}

/** The holder and the waiter are separate ProfileLeases (separate connections), like two processes. */
async function benchHandoff(holder: ProfileLeases, waiter: ProfileLeases): Promise<number[]> {
  let expect = '';
  let woken: (at: bigint) => void = () => undefined;
  const stop = await waiter.onGranted((grant) => {
    if (grant.runId === expect) woken(process.hrtime.bigint());
  });
  const once = async (i: number) => {
    const holderRun = `h-${i}`;
    const waiterRun = `w-${i}`;
    await holder.acquire(scope, profile, holderRun);
    const queued = await waiter.acquire(scope, profile, waiterRun);
    if (queued.status !== 'queued') throw new Error(`bench: ${waiterRun} was not queued`);
    expect = waiterRun;
    const granted = new Promise<bigint>((resolve) => (woken = resolve));
    const t0 = process.hrtime.bigint();
    await holder.release(scope, profile, holderRun);
    const t1 = await granted;
    await waiter.release(scope, profile, waiterRun);
    return ms(t0, t1);
  };
  try {
    await repeat(WARMUP, once);
    return await repeat(N, once);
  } finally {
    stop();
  }
}

async function benchRawPublish(url: string, channel: string): Promise<number[]> {
  const pub = quietRedis(url);
  const sub = quietRedis(url);
  try {
    let received: (at: bigint) => void = () => undefined;
    sub.on('message', () => received(process.hrtime.bigint()));
    await sub.subscribe(channel);
    const once = async () => {
      const got = new Promise<bigint>((resolve) => (received = resolve));
      const t0 = process.hrtime.bigint();
      await pub.publish(channel, 'bench');
      return ms(t0, await got);
    };
    await repeat(WARMUP, once);
    return await repeat(N, once);
  } finally {
    await Promise.all([pub.quit(), sub.quit()]);
  }
}

/** Runs the lease bench against `redisUrl` under a unique key prefix; prints and returns the figures. */
export async function runLeaseBench(redisUrl: string): Promise<LeaseBenchResult> {
  mapWorkspacePaths();
  const { RedisKeys } = await import('../libs/contracts/src');
  const { ProfileLeases } = await import('../libs/leases/src/lib/profile-leases.service');
  const prefix = `bench-${randomBytes(4).toString('hex')}:`;
  const keys = new RedisKeys(prefix);
  const raw = quietRedis(redisUrl);
  const holder = new ProfileLeases({ redis: redisUrl, keys });
  const waiter = new ProfileLeases({ redis: redisUrl, keys });
  try {
    const acquireRelease = figures(await benchAcquireRelease(holder));
    const rawSetNxDel = figures(await benchRawSetNxDel(raw, `${prefix}raw-lock`));
    const handoff = figures(await benchHandoff(holder, waiter));
    const rawPublish = figures(await benchRawPublish(redisUrl, `${prefix}raw-channel`));
    const result: LeaseBenchResult = {
      acquireRelease,
      rawSetNxDel,
      acquireReleaseRatio: ratio(acquireRelease, rawSetNxDel),
      handoff,
      rawPublish,
      handoffRatio: ratio(handoff, rawPublish),
      targets: { acquireReleaseP50Ms: TARGET_ACQUIRE_RELEASE_P50_MS, handoffP50Ms: TARGET_HANDOFF_P50_MS },
      meetsTargets: acquireRelease.p50Ms < TARGET_ACQUIRE_RELEASE_P50_MS && handoff.p50Ms < TARGET_HANDOFF_P50_MS,
    };
    print(result);
    return result;
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
    const left = await raw.keys(`${prefix}*`);
    if (left.length) await raw.del(...left);
    await raw.quit();
  }
}

function print(r: LeaseBenchResult): void {
  const row = (label: string, f: LatencyFigures) =>
    `${label.padEnd(40)}${f.p50Ms.toFixed(3).padStart(10)}${f.p95Ms.toFixed(3).padStart(10)}`;
  const ratioRow = (r: { p50: number; p95: number }) =>
    `${'  ratio'.padEnd(40)}${`${r.p50.toFixed(2)}x`.padStart(10)}${`${r.p95.toFixed(2)}x`.padStart(10)}`;
  console.log(
    [
      `lease bench (N=${r.acquireRelease.n} each, after ${WARMUP} warm-up)`,
      `${''.padEnd(40)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}`,
      row('acquire + release (uncontended)', r.acquireRelease),
      row('raw SET NX + DEL', r.rawSetNxDel),
      ratioRow(r.acquireReleaseRatio),
      row('release -> next waiter granted', r.handoff),
      row('raw PUBLISH -> message', r.rawPublish),
      ratioRow(r.handoffRatio),
      `targets: acquire+release p50 < ${r.targets.acquireReleaseP50Ms} ms, handoff p50 < ${r.targets.handoffP50Ms} ms: ${r.meetsTargets ? 'met' : 'NOT met'}`,
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const given = process.env['STAGEFLOW_BENCH_REDIS_URL'];
  if (given) {
    await runLeaseBench(given);
    return;
  }
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const container = await new GenericContainer('redis:7-bookworm')
    .withCommand(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  try {
    await runLeaseBench(`redis://${container.getHost()}:${container.getMappedPort(6379)}`);
  } finally {
    await container.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
