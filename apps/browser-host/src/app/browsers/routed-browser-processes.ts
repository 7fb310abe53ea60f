import { Inject, Injectable } from '@nestjs/common';
import type { HostCapabilities, SweepReport } from '@stageflow/browser-hosts';
import { hostFor, type HostConfig } from '@stageflow/host-config';
import { HOST_CONFIG, OWNER_SCOPE } from './browser-host.tokens';
import {
  BrowserProcesses,
  LocalBrowserProcesses,
  type BrowserHandle,
  type SharedBrowserHost,
  type SharedLaunch,
  type ThrowawayLaunch,
} from './browser-processes.adapter';
import type { BrowserRecord } from './browser-record';
import { ContainerBrowserProcesses } from './container-browser-processes.adapter';

/**
 * The {@link BrowserProcesses} browser-host runs on: a shared browser goes to the host
 * Host config names for its owner scope (`browser.owner_hosts`, else `browser.host`,
 * read once at start); a throw-away browser always runs on the Host's own Chromium (the
 * spec: profile-less stages launch on the Host, and their allowlist enforcer lives in
 * this process). A registered or running browser stays with the host that started it,
 * whatever the config says now.
 */
@Injectable()
export class RoutedBrowserProcesses extends BrowserProcesses {
  constructor(
    private readonly local: LocalBrowserProcesses,
    private readonly container: ContainerBrowserProcesses,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
    @Inject(OWNER_SCOPE) private readonly scope: string,
  ) {
    super();
  }

  capabilities(): HostCapabilities {
    return this.hostOf(this.scope).capabilities();
  }

  launchShared(launch: SharedLaunch): Promise<BrowserHandle> {
    return this.hostOf(launch.scope).launchShared(launch);
  }

  launchThrowaway(launch: ThrowawayLaunch): Promise<BrowserHandle> {
    return this.local.launchThrowaway(launch);
  }

  adopt(record: BrowserRecord): Promise<BrowserHandle | undefined> {
    return this.byKind(record.host).adopt(record);
  }

  killRemains(record: BrowserRecord): Promise<void> {
    return this.byKind(record.host).killRemains(record);
  }

  isResponsive(handle: BrowserHandle): Promise<boolean> {
    return this.byKind(handle.host).isResponsive(handle);
  }

  /**
   * The local sweep always (Chromium, Xvfb, temp profiles of this host id); the
   * container sweep when Host config uses the container host, so a Host without Docker
   * never needs it.
   */
  async sweepOrphans(known: Iterable<string>): Promise<SweepReport> {
    const ids = [...known];
    const local = await this.local.sweepOrphans(ids);
    if (!this.container.inUse) return local;
    const containers = await this.container.sweepOrphans(ids);
    return { ...local, browsers: [...local.browsers, ...containers.browsers] };
  }

  runningIds(): string[] {
    return [...this.local.runningIds(), ...this.container.runningIds()];
  }

  /**
   * Local browsers are all registered before they are handed out (and the startup
   * sweep ends any other by its command line); only containers can be left over.
   */
  async closeLeftoversOfRun(runId: string, known: Iterable<string>): Promise<string[]> {
    return this.container.inUse ? this.container.closeLeftoversOfRun(runId, known) : [];
  }

  private hostOf(scope: string): SharedBrowserHost {
    return this.byKind(hostFor(this.hostConfig, scope));
  }

  private byKind(kind: 'local' | 'container'): SharedBrowserHost {
    return kind === 'container' ? this.container : this.local;
  }
}
