import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix, waitFor } from '@stageflow/testing';
import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { testConfig } from '../../test/test-app';
import { AppModule } from '../app.module';
import { configureApp } from '../app.setup';

/**
 * "Check now" for real: the whole api (real engine, leases and check records on
 * real Redis) asks a real browser-host process, which starts headless Chromium
 * on the profile, against a tiny login site on 127.0.0.1 whose account page
 * redirects to its login page until a `shared` cookie is set.
 */
jest.setTimeout(180_000);

const ROOT = resolve(__dirname, '../../../../..');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/** Chromium processes (not helpers) of this browser-host, to be sure none is left. */
async function browsersOf(hostId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '')).split('\0');
    if (argv.includes(`--stageflow-host=${hostId}`) && !argv.some((a) => a.startsWith('--type='))) pids.push(Number(entry));
  }
  return pids;
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

describe('Check now on a profile (real Redis, browser-host, Chromium)', () => {
  const name = `p-${randomBytes(4).toString('hex')}`;
  let redisUrl: string;
  let prefix: string;
  let root: string;
  let home: string;
  let hostId: string;
  let host: ChildProcess;
  let site: Server;
  let siteUrl: string;
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  let leases: ProfileLeases;

  beforeAll(async () => {
    redisUrl = testRedisUrl();
    prefix = uniquePrefix('sft-check');
    root = await mkdtemp(join(tmpdir(), 'sf-check-'));
    // One Stageflow home, as in compose: the api creates the profile, browser-host starts Chrome on it.
    home = join(root, 'home');
    await mkdir(home, { recursive: true, mode: 0o700 });
    await writeFile(join(home, 'config.yaml'), '');
    hostId = `it-${randomBytes(3).toString('hex')}`;

    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const signedIn = /(^|;\s*)shared=1/.test(req.headers.cookie ?? '');
      if (url.pathname === '/account' && !signedIn) {
        res.writeHead(302, { location: '/login?next=/account' }).end();
        return;
      }
      // The site's login: a persistent cookie, so it is in the profile once Chrome closes gracefully.
      if (url.pathname === '/login/submit') res.setHeader('set-cookie', 'shared=1; Max-Age=3600; Path=/');
      res.setHeader('content-type', 'text/html');
      res.end(`<title>${url.pathname}</title>${url.pathname === '/account' ? '<p id="user">ada</p>' : ''}`);
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

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
        STAGEFLOW_BROWSER_HOST: 'local',
        STAGEFLOW_BROWSER_HOST_PORT: String(port),
        STAGEFLOW_LOG_LEVEL: 'warn',
        SWC_NODE_PROJECT: 'tsconfig.base.json',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const browserHostUrl = `http://127.0.0.1:${port}`;
    await waitFor('browser-host to answer /health', async () => (await fetch(`${browserHostUrl}/health`).catch(() => undefined))?.status === 200, 90_000);

    const config: ApiConfig = { ...testConfig({ browserHostUrl }), redis: { url: redisUrl, prefix }, home };
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
    configureApp(app, config);
    await app.init();
    http = request(app.getHttpServer());
    // A runner's side of the lease, on the same Redis and prefix.
    leases = new ProfileLeases({ redis: redisUrl, keys: new RedisKeys(prefix) });
  }, 150_000);

  afterAll(async () => {
    await app?.close();
    await leases?.close();
    if (host && host.exitCode === null) {
      const gone = new Promise((done) => host.once('exit', done));
      host.kill('SIGTERM');
      await Promise.race([gone, new Promise((done) => setTimeout(done, 15_000))]);
    }
    for (const pid of await browsersOf(hostId)) process.kill(pid, 'SIGKILL');
    site?.closeAllConnections();
    await new Promise((done) => site?.close(done));
    await deleteKeys(redisUrl, prefix);
    await rm(root, { recursive: true, force: true });
  });

  /** Every response body of this test, to check that none holds the Stageflow home. */
  const bodies: string[] = [];
  const keep = (res: request.Response) => {
    bodies.push(res.text);
    return res;
  };

  it('is logged out, then logged in once the cookie is in the profile; each result kept, audited, the lease free after', async () => {
    const check = { url: `${siteUrl}/account`, logged_out_url: '*/login*', selector: '#user' };
    keep(await http.post('/api/profiles').send({ name, check }).expect(201));

    const before = keep(await http.post(`/api/profiles/${name}/check`).expect(200)).body;
    expect(before).toEqual({ loggedIn: false, url: `${siteUrl}/login?next=/account`, checkedAt: expect.any(String) });
    expect((await leases.describe('local', name)).holder).toBeUndefined();

    // Log in on the profile: a check whose page is the site's login submit sets the persistent cookie,
    // and only a graceful close gets it into the profile for the next browser.
    const login = keep(await http.post(`/api/profiles/${name}/check`).send({ check: { url: `${siteUrl}/login/submit`, cookie: 'shared' } }).expect(200));
    expect(login.body.loggedIn).toBe(true);

    const after = keep(await http.post(`/api/profiles/${name}/check`).expect(200)).body;
    expect(after).toEqual({ loggedIn: true, url: `${siteUrl}/account`, checkedAt: expect.any(String) });

    const one = keep(await http.get(`/api/profiles/${name}`).expect(200)).body;
    expect(one).toMatchObject({ name, check, lastCheck: after, lease: { waiters: [] } });
    expect(one.lease.holder).toBeUndefined();
    const listed = keep(await http.get('/api/profiles').expect(200)).body.find((p: { name: string }) => p.name === name);
    expect(listed.lastCheck).toEqual(after);

    const audit = keep(await http.get(`/api/audit?type=profile_checked&profile=${name}`).expect(200)).body;
    expect(audit.items.map((r: { result: string }) => r.result)).toEqual(['logged_in', 'logged_in', 'logged_out']);
    expect(audit.items[0]).toEqual({ at: expect.any(String), type: 'profile_checked', profile: name, scope: 'local', result: 'logged_in' });
    // The browser was closed: none of this host's Chromium processes is left.
    expect(await browsersOf(hostId)).toEqual([]);
  });

  it('answers 409 naming the run while a run holds the profile, starts no browser and takes no place in its queue', async () => {
    // A real run (queued; no runner here) holds the profile, as a runner's lease would.
    const run = keep(await http.post('/api/runs').send({ yaml: 'version: 1\nname: hold\nstages:\n  - id: a\n    command: "true"\n' }).expect(201)).body;
    expect((await leases.acquire('local', name, run.id)).status).toBe('granted');
    try {
      const res = keep(await http.post(`/api/profiles/${name}/check`).expect(409));
      expect(res.body).toMatchObject({ code: 'profile_leased', details: { profile: name, holder: { runId: run.id } } });
      expect(res.body.message).toContain(`in use by run ${run.id}`);
      expect(await leases.describe('local', name)).toMatchObject({ holder: { runId: run.id }, waiters: [] });
      expect(await browsersOf(hostId)).toEqual([]);
    } finally {
      await leases.release('local', name, run.id);
      await http.post(`/api/runs/${run.id}/cancel`);
    }
    // Free again: the check runs.
    expect(keep(await http.post(`/api/profiles/${name}/check`).expect(200)).body.loggedIn).toBe(true);
  });

  it('never puts the Stageflow home or a profile path in a response', () => {
    expect(bodies.length).toBeGreaterThan(8);
    for (const body of bodies) {
      expect(body).not.toContain(root);
      expect(body).not.toContain(`/${name}/`);
    }
  });
});
