import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { RedisKeys, type StageSession } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import {
  BROWSER_SANDBOX_IMAGE,
  docker,
  ensureBrowserSandboxImage,
  logInOnTab,
  loginCookies,
  removeDockerLeftovers,
  testRedisUrl,
  uniquePrefix,
  waitFor,
} from '@stageflow/testing';
import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { testConfig } from '../../test/test-app';
import { AppModule } from '../app.module';
import { configureApp } from '../app.setup';

/**
 * Deleting a profile on a container Host, for real: the whole api (real engine,
 * leases on real Redis, real disk) and a real browser-host process with
 * `browser.host: container`, real Docker and the sandbox image's Chromium. A run
 * logs in on the profile (the cookie lands in its Docker volume); deleting the
 * profile removes the volume, so a new profile of the same name starts logged out.
 * Three browser containers; every container, volume and network is removed at the end.
 */
jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '../../../../..');
const COOKIE = 'sf_session';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

const volumeExists = (name: string) => docker('volume', 'inspect', name).then(() => true, () => false);

describe('DELETE /api/profiles/:name on a container Host (real Redis, browser-host, Docker)', () => {
  const name = `p-${randomBytes(4).toString('hex')}`;
  const volume = `sf-profile-local-${name}`;
  let redisUrl: string;
  let prefix: string;
  let root: string;
  let home: string;
  let hostId: string;
  let browserHostUrl: string;
  let host: ChildProcess;
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  let leases: ProfileLeases;
  const runs: string[] = [];

  beforeAll(async () => {
    await ensureBrowserSandboxImage();
    redisUrl = testRedisUrl();
    prefix = uniquePrefix('sft-volume');
    root = await mkdtemp(join(tmpdir(), 'sf-volume-'));
    // One Stageflow home, as in compose: the api keeps the profile folders, browser-host the volumes.
    home = join(root, 'home');
    await mkdir(home, { recursive: true, mode: 0o700 });
    await writeFile(
      join(home, 'config.yaml'),
      `browser:\n  host: container\n  container:\n    image: ${BROWSER_SANDBOX_IMAGE}\n    shm_size: 256m\n    memory: 768m\n    pids_limit: 300\n`,
    );
    hostId = `it-${randomBytes(3).toString('hex')}`;

    const port = await freePort();
    host = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        STAGEFLOW_REDIS_URL: redisUrl,
        STAGEFLOW_REDIS_PREFIX: prefix,
        STAGEFLOW_HOME: home,
        STAGEFLOW_HOST_ID: hostId,
        STAGEFLOW_BROWSER_TMP: root,
        STAGEFLOW_BROWSER_HOST: 'container',
        STAGEFLOW_BROWSER_HOST_PORT: String(port),
        STAGEFLOW_LOG_LEVEL: 'warn',
        SWC_NODE_PROJECT: 'tsconfig.base.json',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    browserHostUrl = `http://127.0.0.1:${port}`;
    await waitFor('browser-host to answer /health', async () => (await fetch(`${browserHostUrl}/health`).catch(() => undefined))?.status === 200, 90_000);

    const config: ApiConfig = { ...testConfig({ browserHostUrl }), redis: { url: redisUrl, prefix }, home };
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
    configureApp(app, config);
    await app.init();
    http = request(app.getHttpServer());
    // A runner's side of the lease, on the same Redis and prefix.
    leases = new ProfileLeases({ redis: redisUrl, keys: new RedisKeys(prefix) });
  }, 180_000);

  afterAll(async () => {
    for (const run of runs) await http?.post(`/api/runs/${run}/cancel`).catch(() => undefined);
    await app?.close();
    await leases?.close();
    if (host && host.exitCode === null) {
      const gone = new Promise((done) => host.once('exit', done));
      host.kill('SIGTERM');
      await Promise.race([gone, new Promise((done) => setTimeout(done, 15_000))]);
    }
    if (hostId) await removeDockerLeftovers({ hostId, volumes: [volume], networks: [`sf-browsers-${hostId}`] });
    await deleteKeys(redisUrl, prefix);
    await rm(root, { recursive: true, force: true });
  });

  /** A run (queued; no runner here) that holds the profile's lease, as a runner's would. */
  async function leasedRun(): Promise<{ runId: string; token: number }> {
    const run = (await http.post('/api/runs').send({ yaml: 'version: 1\nname: hold\nstages:\n  - id: a\n    command: "true"\n' }).expect(201)).body;
    runs.push(run.id);
    const outcome = await leases.acquire('local', name, run.id);
    if (outcome.status !== 'granted') throw new Error(`the lease on ${name} should be free`);
    return { runId: run.id, token: outcome.grant.token };
  }

  /** The run's shared browser on the profile, in its container, with a tab for stage `a`. */
  async function session(run: { runId: string; token: number }): Promise<StageSession> {
    const res = await fetch(`${browserHostUrl}/internal/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ runId: run.runId, stageId: 'a', attempt: 1, profile: name, leaseToken: run.token, headed: false, allowDomains: [] }),
    });
    const body = (await res.json()) as StageSession;
    if (res.status !== 201) throw new Error(`opening a session answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  }

  /** Cancels the run and waits until browser-host closed its browser gracefully (cookies written) and released the lease. */
  async function end(runId: string): Promise<void> {
    await http.post(`/api/runs/${runId}/cancel`).expect(200);
    await waitFor('the run\'s lease to be released', async () => !(await leases.describe('local', name)).holder, 60_000);
    await waitFor('the run\'s container to be removed', async () => (await docker('ps', '-aq', '--filter', `label=stageflow.run=${runId}`)) === '', 30_000);
  }

  it('removes the volume with the login, so a new profile of the same name starts logged out; refused, keeping everything, while leased or unreachable', async () => {
    await http.post('/api/profiles').send({ name }).expect(201);
    const folder = join(home, 'browser', 'local', name);

    // A run logs in; the cookie is in the volume once browser-host closed the browser gracefully.
    const first = await leasedRun();
    const s1 = await session(first);
    await logInOnTab(s1.cdpEndpoint, s1.targetId, COOKIE);
    await end(first.runId);
    expect(JSON.parse(await docker('volume', 'inspect', volume))[0].Labels).toMatchObject({ 'stageflow.host': hostId, 'stageflow.profile': name });

    // Without a delete the next run inherits the login: what the delete must stop.
    const second = await leasedRun();
    expect(await loginCookies((await session(second)).cdpEndpoint)).toEqual([COOKIE]);

    // While the run holds the profile: 409 from the api and from browser-host's own route; nothing removed.
    const refused = await http.delete(`/api/profiles/${name}`).expect(409);
    expect(refused.body).toMatchObject({ code: 'profile_leased', details: { holder: { runId: second.runId } } });
    const direct = await fetch(`${browserHostUrl}/internal/profiles/${name}/browser-data`, { method: 'DELETE' });
    expect(direct.status).toBe(409);
    expect(((await direct.json()) as { code: string }).code).toBe('profile_leased');
    expect(await volumeExists(volume)).toBe(true);
    expect(existsSync(folder)).toBe(true);
    await end(second.runId);

    // browser-host unreachable: refused with what to do; folder, record and volume kept.
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const config: ApiConfig = { ...testConfig({ browserHostUrl: deadUrl }), redis: { url: redisUrl, prefix }, home };
    const cut = (await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile()).createNestApplication<NestExpressApplication>({
      bodyParser: false,
      logger: false,
    });
    configureApp(cut, config);
    await cut.init();
    try {
      const res = await request(cut.getHttpServer()).delete(`/api/profiles/${name}`).expect(503);
      expect(res.body).toMatchObject({ code: 'browser_host_unavailable', message: expect.stringMatching(/Start browser-host .*delete the profile again/) });
    } finally {
      await cut.close();
    }
    expect(existsSync(folder)).toBe(true);
    await http.get(`/api/profiles/${name}`).expect(200);
    expect(await volumeExists(volume)).toBe(true);

    // The delete: volume gone, audited with what went (no path, no volume name).
    await http.delete(`/api/profiles/${name}`).expect(204);
    expect(await volumeExists(volume)).toBe(false);
    expect(existsSync(folder)).toBe(false);
    const audit = (await http.get(`/api/audit?type=profile_deleted&profile=${name}`).expect(200)).body;
    expect(audit.items).toEqual([{ at: expect.any(String), type: 'profile_deleted', profile: name, scope: 'local', browserData: 'volume_removed' }]);
    // Idempotent: asking browser-host again is fine.
    const again = await fetch(`${browserHostUrl}/internal/profiles/${name}/browser-data`, { method: 'DELETE' });
    expect(await again.json()).toEqual({ browserData: 'none' });

    // A new profile of the same name starts logged out.
    await http.post('/api/profiles').send({ name }).expect(201);
    const third = await leasedRun();
    expect(await loginCookies((await session(third)).cdpEndpoint)).toEqual([]);
    await end(third.runId);
  });
});
