import { Logger } from '@nestjs/common';
import type { StageActivityReport } from '@stageflow/contracts';
import type { RunStageDefinition } from '@stageflow/pipeline';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserHostClient } from '../browser-host.client';
import { ActivityFiles } from './activity-files.adapter';
import { StageNavigations } from './stage-navigations.service';

beforeAll(() => Logger.overrideLogger(false));

class FakeBrowserHost {
  reports: Array<[string, StageActivityReport]> = [];
  fail = false;
  async reportActivity(sessionId: string, report: StageActivityReport): Promise<void> {
    if (this.fail) throw new Error('browser-host at http://127.0.0.1:1 did not answer');
    this.reports.push([sessionId, report]);
  }
}

const stage = (browser?: Partial<NonNullable<RunStageDefinition['browser']>>) =>
  ({ id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0, ...(browser ? { browser: { headed: false, allowDomains: [], ...browser } } : {}) }) as RunStageDefinition;
const job = { runId: 'r1', stageId: 'work', attempt: 2 };
const ids = job;

describe('StageNavigations', () => {
  let root: string;
  let realDir: string;
  let paths: { cwd: string; own: string; input: string; output: string };
  let host: FakeBrowserHost;
  let navigations: StageNavigations;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sf-navs-'));
    realDir = join(root, 'tools');
    mkdirSync(realDir);
    // A stand-in agent-browser that says it ran.
    writeFileSync(join(realDir, 'agent-browser'), '#!/bin/sh\necho "real agent-browser $*"\n', { mode: 0o755 });
    const own = join(root, 'stage', '.stageflow');
    mkdirSync(own, { recursive: true, mode: 0o700 });
    paths = { cwd: join(root, 'stage'), own, input: join(own, 'input-2.json'), output: join(own, 'output-2.json') };
    host = new FakeBrowserHost();
    navigations = new StageNavigations(new ActivityFiles(), host as unknown as BrowserHostClient);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const profileStage = stage({ profile: 'work', allowDomains: ['127.0.0.1'] });

  it.each([
    ['a stage without a browser', stage()],
    ['a throw-away browser (its allowlist is enforced)', stage({ allowDomains: ['a.test'] })],
    ['a profile stage without allow_domains (nothing to check)', stage({ profile: 'work' })],
  ])('records nothing for %s', async (_what, s) => {
    const env = { PATH: realDir };
    expect(navigations.record(job, s, paths, env)).toBeUndefined();
    expect(env.PATH).toBe(realDir);
    await navigations.report('s1', undefined, ids);
    expect(host.reports).toEqual([]);
  });

  it('puts a wrapper first on the PATH that records the stage\'s navigations, then reports their hosts and removes it', async () => {
    const env = { PATH: `/nonexistent:${realDir}:/usr/bin:/bin` };
    const recording = navigations.record(job, profileStage, paths, env);
    expect(recording).toMatchObject({ state: 'recording', dir: join(paths.own, 'agent-browser-2') });
    const bin = join(paths.own, 'agent-browser-2', 'bin');
    expect(env.PATH).toBe(`${bin}:/nonexistent:${realDir}:/usr/bin:/bin`);
    expect(statSync(join(paths.own, 'agent-browser-2')).mode & 0o777).toBe(0o700);
    expect(statSync(bin).mode & 0o777).toBe(0o700);
    expect(statSync(join(bin, 'agent-browser')).mode & 0o777).toBe(0o700);
    expect(statSync(join(paths.own, 'agent-browser-2', 'activity.jsonl')).mode & 0o777).toBe(0o600);

    const res = spawnSync(
      '/bin/sh',
      ['-c', 'agent-browser open http://localhost:9/x?token=1 && agent-browser --json open 127.0.0.1:9 && agent-browser open http://LOCALHOST:9/ && agent-browser snapshot'],
      { cwd: paths.cwd, env, encoding: 'utf8' },
    );
    expect(res.stdout).toContain('real agent-browser open http://localhost:9/x?token=1');
    expect(res.status).toBe(0);

    await navigations.report('s1', recording, ids);
    expect(host.reports).toEqual([['s1', { navigationHosts: ['localhost', '127.0.0.1'] }]]);
    expect(existsSync(join(paths.own, 'agent-browser-2'))).toBe(false);
  });

  it('finds agent-browser through relative and empty PATH entries, as the shell would from the stage\'s cwd', () => {
    mkdirSync(join(paths.cwd, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(paths.cwd, 'node_modules', '.bin', 'agent-browser'), '#!/bin/sh\n', { mode: 0o755 });
    const env = { PATH: 'node_modules/.bin:/usr/bin' };
    navigations.record(job, profileStage, paths, env);
    const script = readFileSync(join(paths.own, 'agent-browser-2', 'bin', 'agent-browser'), 'utf8');
    expect(script).toContain(`real='${join(paths.cwd, 'node_modules', '.bin', 'agent-browser')}'`);
  });

  it('skips a non-executable agent-browser and a folder of that name, as the shell does', () => {
    const first = join(root, 'first');
    mkdirSync(join(first, 'agent-browser'), { recursive: true });
    const second = join(root, 'second');
    mkdirSync(second);
    writeFileSync(join(second, 'agent-browser'), 'not executable', { mode: 0o644 });
    expect(new ActivityFiles().findExecutable('agent-browser', `${first}:${second}:${realDir}`, paths.cwd)).toBe(join(realDir, 'agent-browser'));
    expect(new ActivityFiles().findExecutable('agent-browser', `${first}:${second}`, paths.cwd)).toBeUndefined();
  });

  it('adds no wrapper without an agent-browser on the PATH, and reports the check as unverified', async () => {
    const env = { PATH: '/nonexistent' };
    const recording = navigations.record(job, profileStage, paths, env);
    expect(recording).toEqual({ state: 'unverified', reason: 'agent_browser_not_found' });
    expect(env.PATH).toBe('/nonexistent');
    await navigations.report('s1', recording, ids);
    expect(host.reports).toEqual([['s1', { navigationHosts: [], unverified: 'agent_browser_not_found' }]]);
  });

  it('reports activity_unreadable when the stage deleted its activity file', async () => {
    const env = { PATH: `${realDir}:/usr/bin:/bin` };
    const recording = navigations.record(job, profileStage, paths, env);
    spawnSync('/bin/sh', ['-c', 'agent-browser open http://localhost:9/ && rm -rf "$PWD/.stageflow/agent-browser-2/activity.jsonl"'], { cwd: paths.cwd, env });
    await navigations.report('s1', recording, ids);
    expect(host.reports).toEqual([['s1', { navigationHosts: [], unverified: 'activity_unreadable' }]]);
  });

  it('runs the stage without a wrapper when it cannot be set up, and reports activity_unreadable', async () => {
    rmSync(paths.own, { recursive: true });
    writeFileSync(paths.own, 'a file where the folder should be');
    const env = { PATH: realDir };
    const recording = navigations.record(job, profileStage, paths, env);
    expect(recording).toMatchObject({ state: 'unverified', reason: 'activity_unreadable' });
    expect(env.PATH).toBe(realDir);
    await navigations.report('s1', recording, ids);
    expect(host.reports).toEqual([['s1', { navigationHosts: [], unverified: 'activity_unreadable' }]]);
  });

  it('replaces what a previous run of the same attempt left', () => {
    navigations.record(job, profileStage, paths, { PATH: realDir });
    writeFileSync(join(paths.own, 'agent-browser-2', 'activity.jsonl'), 'junk\n');
    navigations.record(job, profileStage, paths, { PATH: realDir });
    expect(readFileSync(join(paths.own, 'agent-browser-2', 'activity.jsonl'), 'utf8')).toBe('{"activity":"agent-browser","version":1}\n');
  });

  it('does not throw when browser-host cannot be reached (browser-host records the report as overdue)', async () => {
    const recording = navigations.record(job, profileStage, paths, { PATH: realDir });
    host.fail = true;
    await expect(navigations.report('s1', recording, ids)).resolves.toBeUndefined();
    expect(existsSync(join(paths.own, 'agent-browser-2'))).toBe(false);
  });
});
