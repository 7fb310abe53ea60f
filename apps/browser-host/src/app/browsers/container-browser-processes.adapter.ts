import { Inject, Injectable, Logger } from '@nestjs/common';
import { ContainerChromeAdapter, type ContainerBrowser, type HostCapabilities, type SweepReport } from '@stageflow/browser-hosts';
import { chromeArgs, type HostConfig } from '@stageflow/host-config';
import { BrowserConnections } from './browser-connections';
import { BROWSER_SETTINGS, HOST_CONFIG, type BrowserSettings } from './browser-host.tokens';
import { logBrowserEvent, type BrowserHandle, type SharedBrowserHost, type SharedLaunch } from './browser-processes.adapter';
import type { BrowserRecord } from './browser-record';
import { RunStates } from './run-states.adapter';

const CLOSE_TIMEOUT_MS = 10_000;

/**
 * Shared browsers on the container host (`browser.host: container`, or an
 * `owner_hosts` entry): one container per (run, profile) from the sandbox image, the
 * profile in its Docker volume. A browser a previous browser-host process started is
 * found again by its container's labels, not by /proc. The Docker client is made at
 * first use, so a Host that never sends a scope here needs no Docker.
 */
@Injectable()
export class ContainerBrowserProcesses implements SharedBrowserHost {
  readonly kind = 'container' as const;
  private readonly log = new Logger('ContainerBrowsers');
  private client?: ContainerChromeAdapter;
  /** The browser behind each handle this process gave out (for its container's state). */
  private readonly browsers = new WeakMap<BrowserHandle, ContainerBrowser>();

  constructor(
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
    private readonly connections: BrowserConnections,
    private readonly runs: RunStates,
  ) {}

  /** Whether Host config sends any owner scope to the container host (read at start, like all of it). */
  get inUse(): boolean {
    const { host, ownerHosts } = this.hostConfig.browser;
    return host === 'container' || Object.values(ownerHosts).includes('container');
  }

  capabilities(): HostCapabilities {
    return this.adapter.capabilities();
  }

  async launchShared(launch: SharedLaunch): Promise<BrowserHandle> {
    const browser = (await this.adapter.launch({
      browserId: launch.browserId,
      owner: { runId: launch.runId, scope: launch.scope, profile: launch.profile },
      headed: launch.headed,
      // Host switches, then browser.launch_args, as for a local browser. executable_path
      // is a path on the Host; the container runs its image's Chromium.
      launchArgs: chromeArgs(this.hostConfig),
    })) as ContainerBrowser;
    const handle = this.handleOf(browser, false);
    await this.keepConnection(handle);
    return handle;
  }

  async adopt(record: BrowserRecord): Promise<BrowserHandle | undefined> {
    const browser = (await this.adapter.adopt(record.browserId)) as ContainerBrowser | undefined;
    if (!browser) return undefined;
    const handle = this.handleOf(browser, true);
    await this.keepConnection(handle);
    return handle;
  }

  async killRemains(record: BrowserRecord): Promise<void> {
    await this.connections.drop(record.wsEndpoint);
    await this.adapter.removeRemains(record.browserId);
  }

  async isResponsive(handle: BrowserHandle): Promise<boolean> {
    const browser = this.browsers.get(handle);
    if (!browser || !(await browser.isRunning())) return false;
    try {
      await this.connections.ensure(handle.wsEndpoint);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Containers of this host that no registry entry explains: removed when their run
   * has ended or is gone (closed gracefully first); a live run's are left alone.
   */
  async sweepOrphans(known: Iterable<string>): Promise<SweepReport> {
    const keep = new Set(known);
    const browsers = await this.adapter.sweepOrphans(async (found) => keep.has(found.browserId) || (await this.runs.isAlive(found.runId)));
    return { browsers, displays: [], profiles: [] };
  }

  runningIds(): string[] {
    return this.client?.runningBrowserIds() ?? [];
  }

  /** The run's containers by label that the registry did not explain: closed gracefully and removed. */
  closeLeftoversOfRun(runId: string, known: Iterable<string>): Promise<string[]> {
    const keep = new Set(known);
    return this.adapter.sweepOrphans((found) => found.runId !== runId || keep.has(found.browserId));
  }

  /** Removes the profile's Docker volume; `absent` when there is none. @throws `profile_in_use` (409) */
  removeProfileVolume(scope: string, profile: string): Promise<'removed' | 'absent'> {
    return this.adapter.removeProfileVolume(scope, profile);
  }

  /** Removes this host's profile volumes of `scope` that `keep` does not keep and no container uses. */
  sweepProfileVolumes(scope: string, keep: (profile: string) => Promise<boolean>): Promise<string[]> {
    return this.adapter.sweepProfileVolumes(scope, keep);
  }

  private get adapter(): ContainerChromeAdapter {
    const { container } = this.hostConfig.browser;
    this.client ??= new ContainerChromeAdapter({
      socketPath: this.settings.dockerSocket,
      network: this.settings.browserNetwork,
      hostId: this.settings.hostId,
      image: container.image,
      shmSizeBytes: container.shmSizeBytes,
      memoryBytes: container.memoryBytes,
      pidsLimit: container.pidsLimit,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      onEvent: (event) => logBrowserEvent(this.log, event),
    });
    return this.client;
  }

  private handleOf(browser: ContainerBrowser, adopted: boolean): BrowserHandle {
    const connections = this.connections;
    const handle: BrowserHandle & { toJSON(): object } = {
      browserId: browser.browserId,
      host: 'container',
      containerId: browser.containerId,
      pid: browser.pid,
      cdpPort: browser.cdpPort,
      wsEndpoint: browser.wsEndpoint,
      headedMode: browser.headedMode,
      adopted,
      // Browser.close through the relay, then the container is removed; the volume stays.
      close: async () => {
        await connections.drop(browser.wsEndpoint);
        await browser.close();
      },
      kill: async () => {
        await connections.drop(browser.wsEndpoint);
        await browser.kill();
      },
      toJSON: () => ({ browserId: browser.browserId, containerId: browser.containerId, cdpPort: browser.cdpPort, adopted }),
    };
    this.browsers.set(handle, browser);
    return handle;
  }

  private async keepConnection(handle: BrowserHandle): Promise<void> {
    await this.connections.ensure(handle.wsEndpoint).catch((error: Error) =>
      this.log.warn({ msg: `Could not keep a CDP connection to the browser: ${error.message}`, browserId: handle.browserId }),
    );
  }
}
