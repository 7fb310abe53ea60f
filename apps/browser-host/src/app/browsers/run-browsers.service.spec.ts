import { Logger } from '@nestjs/common';
import type { BrowserRecord } from './browser-record';
import { RunBrowsers } from './run-browsers.service';
import { FakeBrowser, FakeProcesses, MemoryBrowserRegistry, SETTINGS } from './testing/fake-browser-host';

function setup() {
  const processes = new FakeProcesses();
  const registry = new MemoryBrowserRegistry();
  const browsers = new RunBrowsers(processes, registry.asRegistry(), SETTINGS);
  return { processes, registry, browsers };
}

const request = { runId: 'run1', scope: 'local', profile: 'work', leaseToken: 7, headed: false };

beforeAll(() => Logger.overrideLogger(false));

describe('RunBrowsers', () => {
  it('starts one shared browser for concurrent first requests of a (run, profile)', async () => {
    const { processes, registry, browsers } = setup();
    processes.launchDelayMs = 20;
    const results = await Promise.all([browsers.shared(request), browsers.shared(request), browsers.shared(request)]);
    expect(processes.launches).toHaveLength(1);
    expect(new Set(results.map((r) => r.handle.pid)).size).toBe(1);
    expect(results.filter((r) => r.started)).toHaveLength(1);
    expect(registry.records.size).toBe(1);
  });

  it('gives another profile or run its own browser', async () => {
    const { processes, browsers } = setup();
    await browsers.shared(request);
    await browsers.shared({ ...request, profile: 'other' });
    await browsers.shared({ ...request, runId: 'run2' });
    expect(processes.launches.map((l) => l.browserId).length).toBe(3);
    expect(new Set(processes.launches.map((l) => l.browserId)).size).toBe(3);
  });

  it('launches on the run\'s scope and profile and registers the browser without a profile folder', async () => {
    const { processes, registry, browsers } = setup();
    const { handle } = await browsers.shared(request);
    expect(processes.launches[0]).toMatchObject({ runId: 'run1', scope: 'local', profile: 'work' });
    const record = await registry.get(handle.browserId);
    expect(record).toMatchObject({ kind: 'shared', host: 'local', runId: 'run1', scope: 'local', profile: 'work', leaseToken: 7, hostId: 'unit', pid: handle.pid });
    expect(JSON.stringify(record)).not.toContain('.stageflow');
    expect(JSON.stringify(handle)).not.toContain('.stageflow');
  });

  it('restarts a shared browser that died, on the same profile, with a new address', async () => {
    const { processes, registry, browsers } = setup();
    const first = await browsers.shared(request);
    (first.handle as FakeBrowser).alive = false;
    const second = await browsers.shared({ ...request, leaseToken: 7 });
    expect(second).toMatchObject({ started: true, restarted: true });
    expect(second.handle.pid).not.toBe(first.handle.pid);
    expect(second.handle.wsEndpoint).not.toBe(first.handle.wsEndpoint);
    expect(processes.launches.map((l) => [l.scope, l.profile])).toEqual([
      ['local', 'work'],
      ['local', 'work'],
    ]);
    expect((await registry.get(second.handle.browserId))?.pid).toBe(second.handle.pid);
  });

  it('at a run\'s end, also closes what the host has of the run beyond the registry, and a failing lookup does not stop the teardown', async () => {
    const { processes, registry, browsers } = setup();
    const { handle } = await browsers.shared(request);
    await browsers.closeRun('run1');
    expect((handle as FakeBrowser).closed).toBe(true);
    expect(processes.leftoverRuns).toEqual(['run1']);
    await browsers.shared({ ...request, runId: 'run2' });
    processes.leftoversError = new Error('connect ENOENT /var/run/docker.sock');
    await expect(browsers.closeRun('run2')).resolves.toBeUndefined();
    expect(registry.records.size).toBe(0);
  });

  it('remembers a newer lease token on the record', async () => {
    const { registry, browsers } = setup();
    const { handle } = await browsers.shared(request);
    await browsers.shared({ ...request, leaseToken: 9 });
    expect((await registry.get(handle.browserId))?.leaseToken).toBe(9);
  });

  describe('after a restart of browser-host', () => {
    function leftOver(kind: 'shared' | 'throwaway', alive: boolean): { record: BrowserRecord; browser: FakeBrowser } {
      const browser = new FakeBrowser(kind === 'shared' ? 'sb-left' : 'tb-left', 555, 40555);
      browser.alive = alive;
      const record: BrowserRecord = {
        browserId: browser.browserId,
        kind,
        hostId: 'unit',
        host: 'local',
        runId: 'run1',
        ...(kind === 'shared' ? { scope: 'local', profile: 'work' } : { sessionId: 'sf-run1-x-1' }),
        pid: 555,
        cdpPort: 40555,
        wsEndpoint: browser.wsEndpoint,
        headedMode: 'headless',
        startedAt: '2025-01-01T00:00:00.000Z',
      };
      return { record, browser };
    }

    it('re-adopts a live shared browser and serves it without launching', async () => {
      const { processes, registry, browsers } = setup();
      const { record, browser } = leftOver('shared', true);
      processes.leftovers.set(record.browserId, browser);
      await registry.put(record);
      await expect(browsers.restore(record)).resolves.toBe('adopted');
      expect(browsers.handle(record.browserId)).toMatchObject({ pid: 555, adopted: true });
      expect(browsers.knownIds()).toContain(record.browserId);
    });

    it('retires a dead one: remains killed, record dropped', async () => {
      const { processes, registry, browsers } = setup();
      const { record, browser } = leftOver('shared', false);
      processes.leftovers.set(record.browserId, browser);
      await registry.put(record);
      await expect(browsers.restore(record)).resolves.toBe('retired');
      expect(processes.killedRemains).toEqual([record.browserId]);
      expect(registry.records.size).toBe(0);
    });

    it('never keeps a throw-away browser: its allowlist enforcer died with the old process', async () => {
      const { processes, registry, browsers } = setup();
      const { record, browser } = leftOver('throwaway', true);
      processes.leftovers.set(record.browserId, browser);
      await registry.put(record);
      await expect(browsers.restore(record)).resolves.toBe('retired');
      expect(browsers.handle(record.browserId)).toBeUndefined();
    });
  });

  it('closes a run\'s browsers gracefully and forgets them', async () => {
    const { registry, browsers } = setup();
    const a = await browsers.shared(request);
    const b = await browsers.shared({ ...request, profile: 'other' });
    const other = await browsers.shared({ ...request, runId: 'run2' });
    await browsers.closeRun('run1');
    expect((a.handle as FakeBrowser).closed).toBe(true);
    expect((b.handle as FakeBrowser).closed).toBe(true);
    expect((other.handle as FakeBrowser).closed).toBe(false);
    expect([...registry.records.values()].map((r) => r.runId)).toEqual(['run2']);
  });

  it('kills throw-away browsers at shutdown and keeps shared ones for the next process', async () => {
    const { browsers } = setup();
    const shared = await browsers.shared(request);
    const throwaway = await browsers.throwaway({ runId: 'run1', sessionId: 'sf-run1-t-1', headed: false, allowDomains: [], onBlocked: () => undefined });
    await browsers.shutdown();
    expect((throwaway as FakeBrowser).alive).toBe(false);
    expect((shared.handle as FakeBrowser).alive).toBe(true);
  });
});
