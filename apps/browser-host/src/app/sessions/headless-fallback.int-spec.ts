import { RUNS_API, StageAttempts, type RunsApi } from '@stageflow/engine';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl } from '@stageflow/testing';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import {
  bootHost,
  chromiumOf,
  deleteKeys,
  hostDirs,
  hostEnv,
  killHostBrowsers,
  removeDirs,
  type HostDirs,
  type HostInProcess,
} from '../browsers/testing/browser-host.harness';

/**
 * A Linux host with no DISPLAY, no WAYLAND_DISPLAY and no Xvfb on PATH: a stage
 * that asks for a headed browser quietly gets a headless one, and its history
 * says so (real Redis, real engine run, real Chromium).
 */
jest.setTimeout(120_000);

let dirs: HostDirs;
let host: HostInProcess;

beforeAll(async () => {
  dirs = await hostDirs('');
  // PATH holds no Xvfb; Chromium is found by its absolute path (STAGEFLOW_CHROMIUM).
  const emptyBin = join(dirs.root, 'bin');
  await mkdir(emptyBin, { recursive: true });
  host = await bootHost(hostEnv(dirs, testRedisUrl(), { PATH: emptyBin, STAGEFLOW_CHROMIUM: '/usr/bin/chromium' }));
});

afterAll(async () => {
  await host?.app.close();
  await killHostBrowsers(dirs.hostId);
  await deleteKeys(testRedisUrl(), dirs.prefix);
  await removeDirs(dirs);
});

it('runs a headed stage headless on a host with no screen and no Xvfb, and says so in the run', async () => {
  const http = request(host.app.getHttpServer());
  const capabilities = await http.get('/internal/capabilities');
  expect(capabilities.body).toMatchObject({ screen: false, headedMode: 'headless' });

  const runs = host.app.get<RunsApi>(RUNS_API);
  const run = await runs.startRun({
    pipeline: {
      version: 1,
      name: 'headless-fallback',
      maxActiveStages: 1,
      stages: [{ id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0 }],
      edges: [],
    },
    input: {},
  });
  // The stage runs (as a runner would have claimed it): only a running attempt's history grows.
  const claim = await host.app.get(StageAttempts).claim({ runId: run.id, stageId: 'work', attempt: 1 }, 'it-runner');
  expect(claim.outcome).toBe('run');
  const grant = await host.app.get(ProfileLeases).acquire('local', 'headed-wanted', run.id);
  if (grant.status !== 'granted') throw new Error('the lease should be free');

  const opened = await http
    .post('/internal/sessions')
    .send({ runId: run.id, stageId: 'work', attempt: 1, profile: 'headed-wanted', leaseToken: grant.grant.token, headed: true, allowDomains: [] });
  expect(opened.status).toBe(201);
  expect(opened.body.headedMode).toBe('headless');

  // The browser really is headless.
  const [chrome] = await chromiumOf(dirs.hostId);
  const argv = (await readFile(`/proc/${chrome.pid}/cmdline`, 'latin1')).split('\0');
  expect(argv).toContain('--headless=new');

  // The stage's history holds the note (a stage.log event), added without waiting on the open.
  let lines: string[] = [];
  for (let i = 0; i < 50 && !lines.length; i++) {
    const events = await runs.readEvents(run.id, 0, 100);
    lines = events
      .filter((e) => e.type === 'stage.log' && e.stageId === 'work')
      .map((e) => String((e.data as { line?: string }).line ?? ''))
      .filter((line) => line.includes('runs headless'));
    if (!lines.length) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('no Xvfb on PATH');

  await http.delete(`/internal/sessions/${opened.body.sessionId}`);
  await runs.cancelRun(run.id);
});
