import type { HostCapabilities, SweepReport } from '@stageflow/browser-hosts';
import type { BrowserRecord } from '../browser-record';
import { BrowserProcesses, type BrowserHandle, type SharedLaunch, type ThrowawayLaunch } from '../browser-processes.adapter';
import type { BrowserRegistry } from '../browser-registry.repository';
import type { BrowserSettings } from '../browser-host.tokens';
import { ProfileAccess, type ProfileUse } from '../profile-access.adapter';

/**
 * Test doubles for the side effects under RunBrowsers and StageSessions (unit tier:
 * no Redis, no Chromium). Plain objects with the adapters' public shape.
 */

export const SETTINGS: BrowserSettings = {
  dockerSocket: '/var/run/docker.sock',
  chromiumPath: '/usr/bin/chromium',
  hostId: 'unit',
  searchPath: '/usr/bin:/bin',
  tempRoot: '/tmp',
  runtimeDir: '/tmp/sf-unit-run',
  throwawayRoot: '/tmp/sf-unit-throwaway',
  liveView: false,
  inContainer: false,
};

export class FakeBrowser implements BrowserHandle {
  readonly host = 'local' as const;
  alive = true;
  closed = false;
  constructor(
    readonly browserId: string,
    readonly pid: number,
    readonly cdpPort: number,
    readonly adopted = false,
    readonly headedMode: BrowserHandle['headedMode'] = 'headless',
  ) {}
  get wsEndpoint(): string {
    return `ws://127.0.0.1:${this.cdpPort}/devtools/browser/${this.browserId}`;
  }
  async close(): Promise<void> {
    this.alive = false;
    this.closed = true;
  }
  async kill(): Promise<void> {
    this.alive = false;
  }
}

export class FakeProcesses extends BrowserProcesses {
  launches: Array<{ kind: 'shared' | 'throwaway'; browserId: string; runId?: string; scope?: string; profile?: string; headed?: boolean }> = [];
  browsers: FakeBrowser[] = [];
  /** Registered browsers a "previous process" left running, by id. */
  leftovers = new Map<string, FakeBrowser>();
  killedRemains: string[] = [];
  launchDelayMs = 0;
  /** What `headed: true` gets; `headless` plays a host with no screen and no Xvfb. */
  headedMode: HostCapabilities['headedMode'] = 'xvfb';
  private nextPid = 1000;

  capabilities(): HostCapabilities {
    return { screen: false, liveView: true, headedMode: this.headedMode };
  }
  async launchShared(launch: SharedLaunch): Promise<BrowserHandle> {
    this.launches.push({ kind: 'shared', browserId: launch.browserId, runId: launch.runId, scope: launch.scope, profile: launch.profile, headed: launch.headed });
    return this.start(launch.browserId);
  }
  async launchThrowaway(launch: ThrowawayLaunch): Promise<BrowserHandle> {
    this.launches.push({ kind: 'throwaway', browserId: launch.browserId });
    return this.start(launch.browserId);
  }
  async adopt(record: BrowserRecord): Promise<BrowserHandle | undefined> {
    const left = this.leftovers.get(record.browserId);
    return left?.alive ? new FakeBrowser(record.browserId, record.pid, record.cdpPort, true) : undefined;
  }
  async killRemains(record: BrowserRecord): Promise<void> {
    this.killedRemains.push(record.browserId);
  }
  async isResponsive(handle: BrowserHandle): Promise<boolean> {
    return (handle as FakeBrowser).alive;
  }
  async sweepOrphans(): Promise<SweepReport> {
    return { browsers: [], displays: [], profiles: [] };
  }
  runningIds(): string[] {
    return this.browsers.filter((b) => b.alive).map((b) => b.browserId);
  }
  /** Set to make the leftover lookup fail (Docker away). */
  leftoversError?: Error;
  leftoverRuns: string[] = [];
  async closeLeftoversOfRun(runId: string): Promise<string[]> {
    if (this.leftoversError) throw this.leftoversError;
    this.leftoverRuns.push(runId);
    return [];
  }
  private async start(browserId: string): Promise<BrowserHandle> {
    if (this.launchDelayMs) await new Promise((resolve) => setTimeout(resolve, this.launchDelayMs));
    const pid = this.nextPid++;
    const browser = new FakeBrowser(browserId, pid, 40000 + pid);
    this.browsers.push(browser);
    return browser;
  }
}

/** The registry in memory, with BrowserRegistry's public methods. */
export class MemoryBrowserRegistry {
  readonly records = new Map<string, BrowserRecord>();
  async put(record: BrowserRecord): Promise<void> {
    this.records.set(record.browserId, { ...record });
  }
  async get(browserId: string): Promise<BrowserRecord | undefined> {
    const r = this.records.get(browserId);
    return r ? { ...r } : undefined;
  }
  async setLeaseToken(browserId: string, token: number): Promise<void> {
    const r = this.records.get(browserId);
    if (r) r.leaseToken = token;
  }
  async remove(record: Pick<BrowserRecord, 'browserId'>): Promise<void> {
    this.records.delete(record.browserId);
  }
  async ofHost(): Promise<BrowserRecord[]> {
    return [...this.records.values()];
  }
  async ofRun(runId: string): Promise<BrowserRecord[]> {
    return [...this.records.values()].filter((r) => r.runId === runId);
  }
  asRegistry(): BrowserRegistry {
    return this as unknown as BrowserRegistry;
  }
}

export class FakeProfiles extends ProfileAccess {
  created: string[] = [];
  used: ProfileUse[] = [];
  existing = new Set<string>();
  async ensure(_scope: string, profile: string): Promise<void> {
    if (!this.existing.has(profile)) this.created.push(profile);
    this.existing.add(profile);
  }
  async recordUse(use: ProfileUse): Promise<void> {
    this.used.push(use);
  }
  async folder(scope: string, profile: string): Promise<string> {
    return `/home/test/.stageflow/browser/${scope}/${profile}`;
  }
}
