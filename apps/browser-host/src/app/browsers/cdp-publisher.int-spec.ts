import { CdpConnection } from '@stageflow/cdp';
import type { StageSession } from '@stageflow/contracts';
import { RUNS_API, type RunsApi } from '@stageflow/engine';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl } from '@stageflow/testing';
import { networkInterfaces } from 'node:os';
import request from 'supertest';
import {
  bootHost,
  deleteKeys,
  hostDirs,
  hostEnv,
  killHostBrowsers,
  removeDirs,
  waitFor,
  type HostDirs,
  type HostInProcess,
} from './testing/browser-host.harness';

/**
 * browser-host in a container with the local adapter (compose,
 * STAGEFLOW_BROWSER_HOST=local): stages in other containers reach the run's
 * Chromium through a relay on this machine's address, real Chromium and Redis.
 */
jest.setTimeout(120_000);

const ownIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((a) => a?.family === 'IPv4' && !a.internal)?.address;

let dirs: HostDirs;
let host: HostInProcess;

beforeAll(async () => {
  if (!ownIPv4) throw new Error('this test needs a non-loopback IPv4 address on the machine');
  dirs = await hostDirs('');
  host = await bootHost(hostEnv(dirs, testRedisUrl(), { STAGEFLOW_BROWSER_CDP_ADDRESS: 'auto' }));
});

afterAll(async () => {
  await host?.app.close();
  await killHostBrowsers(dirs.hostId);
  await deleteKeys(testRedisUrl(), dirs.prefix);
  await removeDirs(dirs);
});

it('hands stages an endpoint on this machine\'s address that drives the stage\'s tab, and stops it with the browser', async () => {
  const runs = host.app.get<RunsApi>(RUNS_API);
  const run = await runs.startRun({
    pipeline: { version: 1, name: 'publish', maxActiveStages: 1, stages: [{ id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0 }], edges: [] },
    input: {},
  });
  const grant = await host.app.get(ProfileLeases).acquire('local', 'published', run.id);
  if (grant.status !== 'granted') throw new Error('the lease should be free');
  const http = request(host.app.getHttpServer());
  const res = await http
    .post('/internal/sessions')
    .send({ runId: run.id, stageId: 'work', attempt: 1, profile: 'published', leaseToken: grant.grant.token, headed: false, allowDomains: [] });
  expect(res.status).toBe(201);
  const session = res.body as StageSession;
  const endpoint = new URL(session.cdpEndpoint);
  expect(endpoint.hostname).toBe(ownIPv4);
  expect(session.env['AGENT_BROWSER_CDP']).toBe(session.cdpEndpoint);
  // The view (what the relay and scripts read) says the same.
  expect((await http.get(`/internal/sessions/${session.sessionId}`)).body.cdpEndpoint).toBe(session.cdpEndpoint);

  // A client on the published address drives the stage's own tab.
  const cdp = await CdpConnection.connect(session.cdpEndpoint, { callTimeoutMs: 10_000 });
  const page = await cdp.attachToTab(session.targetId);
  const { result } = await cdp.send<{ result: { value: number } }>('Runtime.evaluate', { expression: '6 * 7', returnByValue: true }, { sessionId: page });
  expect(result.value).toBe(42);
  await cdp.close();

  // The run ends: its browser closes, and the relay with it.
  await runs.cancelRun(run.id);
  await waitFor('the relay to stop', async () => {
    try {
      const probe = await CdpConnection.connect(session.cdpEndpoint, { connectTimeoutMs: 1000 });
      await probe.close();
      return false;
    } catch {
      return true;
    }
  }, 30_000);
});
