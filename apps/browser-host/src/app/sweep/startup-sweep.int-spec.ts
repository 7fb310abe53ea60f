import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RedisKeys, type StageSession } from '@stageflow/contracts';
import { EngineModule, RUNS_API, type RunsApi } from '@stageflow/engine';
import { ProfileLeases } from '@stageflow/leases';
import type { Pipeline } from '@stageflow/pipeline';
import { testRedisUrl } from '@stageflow/testing';
import type { ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import {
  bootHost,
  chromiumOf,
  deleteKeys,
  exists,
  freePort,
  hostDirs,
  hostEnv,
  isAlive,
  killHostBrowsers,
  pagesOf,
  removeDirs,
  spawnHost,
  StageTab,
  startAgentDaemon,
  startSite,
  waitFor,
  type HostDirs,
  type HostInProcess,
  type TestSite,
} from '../browsers/testing/browser-host.harness';

/**
 * A browser-host process is SIGKILLed with one live and one dead run, and a new one
 * starts (in this process) on the same host id. Three Chromium launches: the live
 * run's shared browser, the dead run's shared and throw-away browsers.
 */
jest.setTimeout(240_000);

let dirs: HostDirs;
let engine: INestApplicationContext;
let runs: RunsApi;
let leases: ProfileLeases;
let site: TestSite;
let first: ChildProcess | undefined;
let second: HostInProcess | undefined;

const pipeline = (name: string, stages: Pipeline['stages']): Pipeline => ({ version: 1, name, maxActiveStages: 4, stages, edges: [] });

beforeAll(async () => {
  dirs = await hostDirs('browser:\n  blocked_sites: []\n');
  site = await startSite();
  engine = await NestFactory.createApplicationContext(EngineModule.forRoot({ url: testRedisUrl(), prefix: dirs.prefix }), { logger: false });
  runs = engine.get<RunsApi>(RUNS_API);
  leases = new ProfileLeases({ redis: testRedisUrl(), keys: new RedisKeys(dirs.prefix) });
});

afterAll(async () => {
  if (first && first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
  await second?.app.close();
  await leases?.close();
  await engine?.close();
  await killHostBrowsers(dirs.hostId);
  await site?.close();
  await deleteKeys(testRedisUrl(), dirs.prefix);
  await removeDirs(dirs);
});

async function open(port: number, body: Record<string, unknown>): Promise<StageSession> {
  const res = await fetch(`http://127.0.0.1:${port}/internal/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as StageSession;
  if (res.status !== 201) throw new Error(`open answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function granted(profile: string, runId: string): Promise<number> {
  const outcome = await leases.acquire('local', profile, runId);
  if (outcome.status !== 'granted') throw new Error(`lease on ${profile} should be free`);
  return outcome.grant.token;
}

it('a restarted browser-host ends what the dead run left and re-adopts the live run\'s browser', async () => {
  const live = await runs.startRun({ pipeline: pipeline('live', [{ id: 'approve', kind: 'gate', message: 'ok?', timeoutSeconds: 600, retries: 0 }, { id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0 }]), input: {} });
  const dead = await runs.startRun({ pipeline: pipeline('dead', [{ id: 'fetch', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0 }]), input: {} });
  const liveToken = await granted('p-live', live.id);
  const deadToken = await granted('p-dead', dead.id);
  const echo = `http://127.0.0.1:${site.port}/echo`;

  // The first browser-host: its own process, killed below.
  const port = await freePort();
  first = await spawnHost(hostEnv(dirs, testRedisUrl()), port, join(dirs.root, 'first-host.log'));
  const common = { attempt: 1, headed: false, allowDomains: [] as string[] };
  const liveSession = await open(port, { ...common, runId: live.id, stageId: 'approve', profile: 'p-live', leaseToken: liveToken });
  const deadShared = await open(port, { ...common, runId: dead.id, stageId: 'fetch', profile: 'p-dead', leaseToken: deadToken });
  const deadThrowaway = await open(port, { ...common, runId: dead.id, stageId: 'fetch', attempt: 2, allowDomains: ['127.0.0.1'] });

  const liveTab = await StageTab.attach(liveSession.cdpEndpoint, liveSession.targetId);
  expect(await liveTab.goto(`http://127.0.0.1:${site.port}/set?name=kept`)).toBeUndefined();
  await liveTab.detach();

  const browsers = await chromiumOf(dirs.hostId);
  const pidOf = (browserId: string) => browsers.find((b) => b.browserId === browserId)?.pid as number;
  expect(browsers).toHaveLength(3);
  const throwawayRoot = join(dirs.root, `stageflow-${dirs.hostId}-throwaway`);
  expect((await readdir(throwawayRoot)).some((n) => n.startsWith(`${deadThrowaway.browserId}.`))).toBe(true);
  const daemon = await startAgentDaemon(deadShared.socketDir, deadShared.sessionId);
  const runtimeDir = join(dirs.root, `stageflow-${dirs.hostId}-run`);
  // A socket dir of a run the engine never heard of (a crash long ago).
  await mkdir(join(runtimeDir, 'ghost-run'), { mode: 0o700 });
  await writeFile(join(runtimeDir, 'ghost-run', '.stageflow-run'), 'ghost-run');
  await writeFile(join(runtimeDir, 'ghost-run', 'sf-ghost-run-x-1.sock'), '');

  // browser-host dies without any shutdown; then the dead run ends while nobody watches.
  first.kill('SIGKILL');
  await waitFor('the first browser-host to be gone', async () => first?.signalCode === 'SIGKILL');
  await runs.cancelRun(dead.id);

  second = await bootHost(hostEnv(dirs, testRedisUrl()));
  const { report } = second;
  expect(report.endedRuns.sort()).toEqual([dead.id, 'ghost-run'].sort());
  expect(report.adopted).toEqual([liveSession.browserId]);

  // The dead run: browsers closed (the shared one gracefully), temp profile, sessions,
  // daemon and socket files gone, lease released.
  expect(isAlive(pidOf(deadShared.browserId))).toBe(false);
  expect(isAlive(pidOf(deadThrowaway.browserId))).toBe(false);
  expect(await exists(join(dirs.home, 'browser', 'local', 'p-dead', 'SingletonLock'))).toBe(false);
  expect((await readdir(throwawayRoot)).filter((n) => n.startsWith(`${deadThrowaway.browserId}.`))).toEqual([]);
  await waitFor('the dead run\'s agent-browser daemon to exit', async () => !isAlive(daemon));
  expect(await exists(deadShared.socketDir)).toBe(false);
  expect(await exists(join(runtimeDir, 'ghost-run'))).toBe(false);
  const redis = second.app.get(BrowserHostRedis).client;
  const keys = new RedisKeys(dirs.prefix);
  expect(await redis.smembers(keys.runBrowsers(dead.id))).toEqual([]);
  expect(await redis.smembers(keys.runBrowserSessions(dead.id))).toEqual([]);
  expect((await leases.describe('local', 'p-dead')).holder).toBeUndefined();
  expect((await chromiumOf(dirs.hostId)).map((b) => b.browserId)).toEqual([liveSession.browserId]);

  // The live run: same browser, same tab, still answering, still logged in.
  const http = request(second.app.getHttpServer());
  expect(isAlive(pidOf(liveSession.browserId))).toBe(true);
  expect((await http.get(`/internal/sessions/${liveSession.sessionId}`)).status).toBe(200);
  expect(await pagesOf(liveSession.cdpEndpoint)).toContain(liveSession.targetId);
  const next = await http
    .post('/internal/sessions')
    .send({ ...common, runId: live.id, stageId: 'work', profile: 'p-live', leaseToken: liveToken });
  expect(next.status).toBe(201);
  expect(next.body).toMatchObject({ browserId: liveSession.browserId, cdpEndpoint: liveSession.cdpEndpoint });
  const tab = await StageTab.attach(next.body.cdpEndpoint, next.body.targetId);
  try {
    expect(await tab.cookiesAt(echo)).toEqual(['kept']);
  } finally {
    await tab.detach();
  }
  expect((await leases.describe('local', 'p-live')).holder?.runId).toBe(live.id);

  // The re-adopted browser is closed gracefully at its run's end, like one launched here.
  await runs.cancelRun(live.id);
  await waitFor('the re-adopted browser to be closed', async () => !isAlive(pidOf(liveSession.browserId)));
  await waitFor('the live run\'s lease to be released', async () => !(await leases.describe('local', 'p-live')).holder);
  expect(await exists(join(dirs.home, 'browser', 'local', 'p-live', 'SingletonLock'))).toBe(false);
  expect(await chromiumOf(dirs.hostId)).toEqual([]);
  // The first host's log: every session line names run, stage, profile and browser; no profile path.
  const log = await readFile(join(dirs.root, 'first-host.log'), 'utf8');
  const opened = log
    .split('\n')
    .filter((line) => line.includes('Opened a stage session'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(opened).toContainEqual(
    expect.objectContaining({ runId: live.id, stageId: 'approve', profile: 'p-live', browserId: liveSession.browserId }),
  );
  expect(opened).toHaveLength(3);
  expect(log).not.toContain(dirs.home);
});
