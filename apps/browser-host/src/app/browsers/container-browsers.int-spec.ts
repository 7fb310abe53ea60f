import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ContainerChromeAdapter, profileVolumeName, type ContainerBrowser, type LaunchedBrowser } from '@stageflow/browser-hosts';
import { loadServiceConfig } from '@stageflow/config';
import { RedisKeys, TERMINAL_RUN_STATES, type StageSession } from '@stageflow/contracts';
import { EngineModule, RUNS_API, StageAttempts, type RunsApi } from '@stageflow/engine';
import { HostConfigError } from '@stageflow/host-config';
import { ProfileLeases } from '@stageflow/leases';
import type { Pipeline } from '@stageflow/pipeline';
import {
  BROWSER_SANDBOX_IMAGE,
  docker,
  ensureBrowserSandboxImage,
  logInOnTab,
  loginCookies,
  removeDockerLeftovers,
  testRedisUrl,
} from '@stageflow/testing';
import { spawn } from 'node:child_process';
import request from 'supertest';
import { AppModule } from '../app.module';
import { BrowserRegistry } from './browser-registry.repository';
import {
  bootHost,
  browserContainers,
  deleteKeys,
  hostDirs,
  hostEnv,
  removeDirs,
  StageTab,
  waitFor,
  type HostDirs,
  type HostInProcess,
} from './testing/browser-host.harness';

/**
 * browser-host with `browser.host: container` against real Redis, a real engine run,
 * real Docker and the sandbox image's Chromium. Six browser containers in all; every
 * container, volume and network is removed at the end (by this file's host id).
 */
jest.setTimeout(300_000);

const CONFIG = `browser:
  host: container
  container:
    image: ${BROWSER_SANDBOX_IMAGE}
    shm_size: 256m
    memory: 768m
    pids_limit: 300
`;
const MIB = 1024 * 1024;

let dirs: HostDirs;
let engine: INestApplicationContext;
let runs: RunsApi;
let leases: ProfileLeases;
let host: HostInProcess | undefined;
let strays: ContainerChromeAdapter;
const profiles: string[] = [];
const profile = (name: string): string => {
  const full = `${name}-${dirs.hostId}`;
  profiles.push(full);
  return full;
};

/** A gate that keeps the run open, and a stage the test runs itself (no runner here). */
const gateAndWork = (name: string): Pipeline => ({
  version: 1,
  name,
  maxActiveStages: 4,
  stages: [
    { id: 'approve', kind: 'gate', message: 'ok?', timeoutSeconds: 600, retries: 0 },
    { id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0 },
  ],
  edges: [],
});

beforeAll(async () => {
  await ensureBrowserSandboxImage();
  dirs = await hostDirs(CONFIG);
  engine = await NestFactory.createApplicationContext(EngineModule.forRoot({ url: testRedisUrl(), prefix: dirs.prefix }), { logger: false });
  runs = engine.get<RunsApi>(RUNS_API);
  leases = new ProfileLeases({ redis: testRedisUrl(), keys: new RedisKeys(dirs.prefix) });
  // Containers this test starts itself, as a browser-host that died before registering them would have.
  strays = new ContainerChromeAdapter({ image: BROWSER_SANDBOX_IMAGE, shmSizeBytes: 256 * MIB, memoryBytes: 768 * MIB, pidsLimit: 300, hostId: dirs.hostId });
  host = await bootHost(hostEnv(dirs, testRedisUrl()));
});

afterAll(async () => {
  await host?.app.close();
  await leases?.close();
  await engine?.close();
  if (dirs) {
    await removeDockerLeftovers({
      hostId: dirs.hostId,
      volumes: profiles.map((p) => profileVolumeName('local', p)),
      networks: [`sf-browsers-${dirs.hostId}`],
    });
    await deleteKeys(testRedisUrl(), dirs.prefix);
    await removeDirs(dirs);
  }
});

async function granted(name: string, runId: string): Promise<number> {
  const outcome = await leases.acquire('local', name, runId);
  if (outcome.status !== 'granted') throw new Error(`lease on ${name} should be free`);
  return outcome.grant.token;
}

async function open(body: Record<string, unknown>): Promise<StageSession> {
  const res = await request((host as HostInProcess).app.getHttpServer())
    .post('/internal/sessions')
    .send({ attempt: 1, headed: true, allowDomains: [], ...body });
  if (res.status !== 201) throw new Error(`open answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as StageSession;
}

async function running(runId: string): Promise<Array<Awaited<ReturnType<typeof browserContainers>>[number]>> {
  return (await browserContainers(dirs.hostId, runId)).filter((c) => c.State.Running);
}

describe('browser.host: container', () => {
  let run1: string;
  let run2: string;
  let p1: string;
  let token2: number;
  let session2: StageSession;

  it('runs the shared browser in a hardened container with the configured limits, its port on 127.0.0.1 only', async () => {
    run1 = (await runs.startRun({ pipeline: gateAndWork('login'), input: {} })).id;
    p1 = profile('p1');
    const session = await open({ runId: run1, stageId: 'approve', profile: p1, leaseToken: await granted(p1, run1) });
    expect(session.headedMode).toBe('xvfb');
    expect(session.cdpEndpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\//);

    const [info] = await running(run1);
    expect(info.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      PidsLimit: 300,
      Memory: 768 * MIB,
      MemorySwap: 768 * MIB,
      ShmSize: 256 * MIB,
    });
    expect(info.Config.User).not.toMatch(/^(|0|root)(:|$)/);
    expect(info.Config.Labels).toMatchObject({ 'stageflow.run': run1, 'stageflow.profile': p1, 'stageflow.scope': 'local', 'stageflow.host': dirs.hostId });
    expect(info.Mounts.map((m) => m.Name)).toEqual([profileVolumeName('local', p1)]);
    const bindings = Object.values(info.NetworkSettings.Ports).flatMap((b) => b ?? []);
    expect(bindings.map((b) => b.HostIp)).toEqual(['127.0.0.1']);
    expect(session.cdpEndpoint).toContain(`:${bindings[0].HostPort}/`);
    const record = await host?.app.get(BrowserRegistry).get(session.browserId);
    expect(record).toMatchObject({ host: 'container', containerId: info.Id, runId: run1, profile: p1 });

    const capabilities = await request(host?.app.getHttpServer()).get('/internal/capabilities');
    expect(capabilities.body).toMatchObject({ screen: false, headedMode: 'xvfb' });

    // A stage logs in; the login page sets a persistent cookie.
    await logInOnTab(session.cdpEndpoint, session.targetId, 'sid');
    expect(await loginCookies(session.cdpEndpoint)).toEqual(['sid']);
  });

  it('closes the container gracefully at the run\'s end, and the next run\'s new container is still logged in', async () => {
    await runs.cancelRun(run1);
    await waitFor('run 1\'s container to be removed', async () => (await browserContainers(dirs.hostId, run1)).length === 0);
    await waitFor('run 1\'s lease to be released', async () => !(await leases.describe('local', p1)).holder);
    expect(await docker('volume', 'ls', '-q', '--filter', `label=stageflow.profile=${p1}`)).toBe(profileVolumeName('local', p1));

    run2 = (await runs.startRun({ pipeline: gateAndWork('work'), input: {} })).id;
    token2 = await granted(p1, run2);
    session2 = await open({ runId: run2, stageId: 'approve', profile: p1, leaseToken: token2 });
    expect(await running(run2)).toHaveLength(1);
    expect(await loginCookies(session2.cdpEndpoint)).toEqual(['sid']);
  });

  it('after a docker kill mid-run, the next stage gets a restarted container; the lease stays and the run goes on', async () => {
    const attempts = engine.get(StageAttempts);
    const work = { runId: run2, stageId: 'work', attempt: 1 };
    expect((await attempts.claim(work, 'test-runner')).outcome).toBe('run');
    const [before] = await running(run2);
    await docker('kill', before.Id);

    const next = await open({ runId: run2, stageId: 'work', profile: p1, leaseToken: token2 });
    const [after] = await running(run2);
    expect(after.Id).not.toBe(before.Id);
    expect(next.cdpEndpoint).not.toBe(session2.cdpEndpoint);
    expect((await browserContainers(dirs.hostId, run2)).map((c) => c.Id)).toEqual([after.Id]);
    // The lease was never let go: same holder, same token.
    expect((await leases.describe('local', p1)).holder).toMatchObject({ runId: run2, token: token2 });
    await expect(leases.assertCurrent('local', p1, run2, token2)).resolves.toBeUndefined();
    // The stage works on the new browser, still logged in (the cookie was written at run 1's close).
    const tab = await StageTab.attach(next.cdpEndpoint, next.targetId);
    try {
      expect(await tab.evaluate<number>('1 + 1')).toBe(2);
    } finally {
      await tab.detach();
    }
    expect(await loginCookies(next.cdpEndpoint)).toEqual(['sid']);
    // The stage's history says so (written in the background).
    await waitFor('the restart note in the run\'s history', async () =>
      (await runs.readEvents(run2, 0, 1000)).some((e) => e.type === 'stage.log' && /had died .* re-verify the login/.test(JSON.stringify(e.data))),
    );
    // The stage finishes and the run carries on (its gate still waits).
    expect(await attempts.finish(work, { state: 'success' })).toBe('recorded');
    expect((await runs.getStage(run2, 'work')).state).toBe('success');
    expect(TERMINAL_RUN_STATES).not.toContain((await runs.getRun(run2)).state);
  });

  it('at start, removes the containers of finished and unknown runs and leaves live runs\' containers alone', async () => {
    // A third run gets a container, then browser-host stops (shared browsers keep running).
    const run3 = (await runs.startRun({ pipeline: gateAndWork('ends-while-down'), input: {} })).id;
    const p3 = profile('p3');
    await open({ runId: run3, stageId: 'approve', profile: p3, leaseToken: await granted(p3, run3) });
    await host?.app.close();
    host = undefined;
    // While no browser-host runs: run 3 ends; stray containers appear that no registry knows.
    await runs.cancelRun(run3);
    const ghost: LaunchedBrowser = await strays.launch({ browserId: `sb-ghost-${dirs.hostId}`, owner: { runId: 'run-nobody-knows', scope: 'local', profile: profile('p-ghost') }, headed: false, launchArgs: [] });
    const unregistered = await strays.launch({ browserId: `sb-live-${dirs.hostId}`, owner: { runId: run2, scope: 'local', profile: profile('p-live') }, headed: false, launchArgs: [] });
    const [run2Container] = await running(run2).then((list) => list.filter((c) => c.Config.Labels['stageflow.profile'] === p1));

    host = await bootHost(hostEnv(dirs, testRedisUrl()));
    const { report } = host;
    expect(report.endedRuns).toEqual([run3]);
    expect(report.orphans.browsers).toEqual([ghost.browserId]);
    expect(report.adopted).toEqual([browserIdOf(run2Container)]);
    expect(await browserContainers(dirs.hostId, run3)).toEqual([]);
    expect(await browserContainers(dirs.hostId, 'run-nobody-knows')).toEqual([]);
    await ghost.exited;
    const left = (await running(run2)).map((c) => c.Id).sort();
    expect(left).toEqual([run2Container.Id, (unregistered as ContainerBrowser).containerId].sort());
    await waitFor('run 3\'s lease to be released', async () => !(await leases.describe('local', p3)).holder);

    // The adopted browser serves the run's next stage and is closed at the run's end.
    const again = await open({ runId: run2, stageId: 'work', attempt: 2, profile: p1, leaseToken: token2 });
    expect(again.browserId).toBe(browserIdOf(run2Container));
    // At the run's end both go: the registered one and the one no registry named.
    await runs.cancelRun(run2);
    await waitFor('run 2\'s containers to be removed', async () => (await browserContainers(dirs.hostId, run2)).length === 0);
    await unregistered.exited;
  });
});

/** The browser id a container carries in its labels. */
function browserIdOf(info: { Config: { Labels: Record<string, string> } }): string {
  return info.Config.Labels['stageflow.browser'];
}

describe('invalid browser.container and owner_hosts', () => {
  const cases: Array<[string, string, string]> = [
    ['browser:\n  container:\n    image: Stageflow/Browser\n', 'browser.container.image', 'must be an image reference'],
    ['browser:\n  container:\n    image: --privileged\n', 'browser.container.image', 'must be an image reference'],
    ['browser:\n  container:\n    shm_size: 1gb\n', 'browser.container.shm_size', 'must be a size'],
    ['browser:\n  container:\n    shm_size: 0\n', 'browser.container.shm_size', 'must be a size'],
    ['browser:\n  container:\n    memory: 1m\n', 'browser.container.memory', "below Docker's minimum of 6m"],
    ['browser:\n  container:\n    memory: lots\n', 'browser.container.memory', 'must be a size'],
    ['browser:\n  container:\n    pids_limit: 0\n', 'browser.container.pids_limit', 'must be a positive whole number'],
    ['browser:\n  container:\n    pids_limit: "512"\n', 'browser.container.pids_limit', 'must be a positive whole number'],
    ['browser:\n  container:\n    cpus: 2\n', 'browser.container.cpus', 'is not a known key'],
    ['browser:\n  container: big\n', 'browser.container', 'must be a mapping'],
    ['browser:\n  owner_hosts:\n    local: docker\n', 'browser.owner_hosts.local', 'must be local or container'],
    ['browser:\n  owner_hosts:\n    ../etc: container\n', 'browser.owner_hosts', 'is not an owner scope name'],
    ['browser:\n  owner_hosts: [local]\n', 'browser.owner_hosts', 'must be a mapping'],
    ['browser:\n  host: contaner\n', 'browser.host', 'Did you mean container?'],
  ];

  it.each(cases)('%j stops browser-host at boot naming %s', async (yaml, key, what) => {
    const bad = await hostDirs(yaml);
    try {
      let error: unknown;
      try {
        AppModule.forRoot(loadServiceConfig('browser-host', hostEnv(bad, testRedisUrl())));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HostConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(new RegExp(`config\\.yaml:\\d+:\\d+: ${key.replace(/\./g, '\\.')} `));
      expect(message).toContain(what);
    } finally {
      await removeDirs(bad);
    }
  });

  it('the browser-host process exits 1 with the message on stderr, before touching Docker', async () => {
    const bad = await hostDirs('browser:\n  host: container\n  container:\n    pids_limit: -1\n');
    try {
      const child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/browser-host/src/main.ts'], {
        env: { ...hostEnv(bad, testRedisUrl()), SWC_NODE_PROJECT: 'tsconfig.base.json', DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toContain('browser.container.pids_limit must be a positive whole number (got -1)');
      expect(stderr).toContain('fix it and restart the Host');
    } finally {
      await removeDirs(bad);
    }
  });
});
