import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  launchThrowaway,
  LocalChromeAdapter,
  type AllowlistBlock,
  type BrowserHostEvent,
  type HeadedMode,
  type HostCapabilities,
  type LaunchedBrowser,
  type SweepReport,
} from '@stageflow/browser-hosts';
import { browserVersion, CdpConnection } from '@stageflow/cdp';
import { chromeArgs, type HostConfig } from '@stageflow/host-config';
import { BrowserConnections } from './browser-connections';
import { BROWSER_SETTINGS, HOST_CONFIG, type BrowserSettings } from './browser-host.tokens';
import type { BrowserHostKind, BrowserRecord } from './browser-record';
import { ProcessTable, switchValue } from './process-table.adapter';
import { ProfileAccess } from './profile-access.adapter';

/**
 * A running browser as browser-host holds it: launched by this process, or re-adopted
 * from the registry after a restart. Serializes to its public fields only.
 */
export interface BrowserHandle {
  readonly browserId: string;
  /** Which host runs it: a local Chromium process or a browser container. */
  readonly host: BrowserHostKind;
  /** Container host: the browser's container. */
  readonly containerId?: string;
  readonly pid: number;
  readonly cdpPort: number;
  readonly wsEndpoint: string;
  readonly headedMode: HeadedMode;
  /** True when a previous browser-host process launched it (see docs/browser-sessions.md, "Restarts"). */
  readonly adopted: boolean;
  /** Graceful: `Browser.close`, a bounded wait, SIGKILL as the fallback. Resolves once the process is gone. */
  close(): Promise<void>;
  /** SIGKILL. Resolves once the process is gone. */
  kill(): Promise<void>;
}

/** The shared browser of a (run, profile). Where its profile lives is the host's business (a folder, a volume). */
export interface SharedLaunch {
  browserId: string;
  runId: string;
  scope: string;
  profile: string;
  headed: boolean;
}

export interface ThrowawayLaunch {
  browserId: string;
  headed: boolean;
  /** Empty: no allowlist (the stage set no `allow_domains`). */
  allowDomains: readonly string[];
  onBlocked: (block: AllowlistBlock) => void;
}

/**
 * Side effects on browsers: launching (shared browsers on the host Host config names
 * for their scope, throw-away browsers always locally), finding a browser a previous
 * process launched, health checks, the orphan sweep. The services above it are tested
 * with a fake.
 */
export abstract class BrowserProcesses {
  /** What the host of this browser-host's owner scope offers a login stage. */
  abstract capabilities(): HostCapabilities;
  abstract launchShared(launch: SharedLaunch): Promise<BrowserHandle>;
  abstract launchThrowaway(launch: ThrowawayLaunch): Promise<BrowserHandle>;
  /**
   * A handle on a registered browser this process did not launch, when its process is
   * alive, is that browser (its command line names the id and this host), and answers
   * CDP on the registered port. `undefined` otherwise.
   */
  abstract adopt(record: BrowserRecord): Promise<BrowserHandle | undefined>;
  /** SIGKILLs what is left of a registered browser that cannot be adopted (alive but not answering). */
  abstract killRemains(record: BrowserRecord): Promise<void>;
  /** Process alive and its kept CDP connection open (reconnected once when it dropped). */
  abstract isResponsive(handle: BrowserHandle): Promise<boolean>;
  /**
   * Ends this host's Chromium, Xvfb and temp profiles whose id is not in `known`; with
   * the container host, its containers whose id is not known and whose run has ended.
   */
  abstract sweepOrphans(known: Iterable<string>): Promise<SweepReport>;
  /** Ids of browsers this process launched and that still run. */
  abstract runningIds(): string[];
  /**
   * At a run's end, after its registered browsers are closed: what else of the run is
   * still running (a browser container browser-host started but died before it
   * registered) is closed gracefully too. Ids in `known` are left alone.
   */
  abstract closeLeftoversOfRun(runId: string, known: Iterable<string>): Promise<string[]>;
}

/** One kind of host for shared browsers (local Chromium, containers), as the router in front of them sees it. */
export interface SharedBrowserHost {
  readonly kind: BrowserHostKind;
  capabilities(): HostCapabilities;
  launchShared(launch: SharedLaunch): Promise<BrowserHandle>;
  adopt(record: BrowserRecord): Promise<BrowserHandle | undefined>;
  killRemains(record: BrowserRecord): Promise<void>;
  isResponsive(handle: BrowserHandle): Promise<boolean>;
  sweepOrphans(known: Iterable<string>): Promise<SweepReport>;
  runningIds(): string[];
}

const CLOSE_TIMEOUT_MS = 10_000;
const HEALTH_TIMEOUT_MS = 3000;

/** Shared and throw-away browsers on `LocalChromeAdapter` (Chromium as a child of browser-host). */
@Injectable()
export class LocalBrowserProcesses implements SharedBrowserHost {
  readonly kind = 'local' as const;
  private readonly log = new Logger('BrowserProcesses');
  private readonly adapter: LocalChromeAdapter;
  private readonly procs = new ProcessTable();

  constructor(
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
    private readonly connections: BrowserConnections,
    private readonly profiles: ProfileAccess,
  ) {
    this.adapter = new LocalChromeAdapter({
      chromiumPath: settings.chromiumPath,
      display: settings.display,
      waylandDisplay: settings.waylandDisplay,
      xdgRuntimeDir: settings.xdgRuntimeDir,
      searchPath: settings.searchPath,
      hostId: settings.hostId,
      throwawayRoot: settings.throwawayRoot,
      containerSandbox: settings.inContainer,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      onEvent: (event) => logBrowserEvent(this.log, event),
    });
  }

  capabilities(): HostCapabilities {
    return this.adapter.capabilities();
  }

  async launchShared(launch: SharedLaunch): Promise<BrowserHandle> {
    const browser = await this.adapter.launch({
      browserId: launch.browserId,
      // From ProfileStore.pathFor; goes to Chromium and nowhere else.
      userDataDir: await this.profiles.folder(launch.scope, launch.profile),
      headed: launch.headed,
      // Host switches, then browser.launch_args; the adapter adds its own and drops repeats.
      launchArgs: chromeArgs(this.hostConfig),
      executablePath: this.hostConfig.browser.executablePath,
    });
    const handle = launched(browser, this.connections);
    await this.keepConnection(handle.wsEndpoint, handle.browserId);
    return handle;
  }

  async launchThrowaway(launch: ThrowawayLaunch): Promise<BrowserHandle> {
    const browser = await launchThrowaway(this.adapter, {
      browserId: launch.browserId,
      headed: launch.headed,
      launchArgs: chromeArgs(this.hostConfig),
      executablePath: this.hostConfig.browser.executablePath,
      allowDomains: launch.allowDomains.length > 0 ? launch.allowDomains : undefined,
      onBlocked: launch.onBlocked,
    });
    return launched(browser, this.connections);
  }

  async adopt(record: BrowserRecord): Promise<BrowserHandle | undefined> {
    if (!(await this.isThatBrowser(record))) return undefined;
    try {
      await browserVersion(record.cdpPort, { timeoutMs: HEALTH_TIMEOUT_MS });
    } catch {
      return undefined;
    }
    const procs = this.procs;
    const connections = this.connections;
    let closing: Promise<void> | undefined;
    const gone = async (): Promise<void> => {
      if (!(await procs.waitForExit(record.pid, CLOSE_TIMEOUT_MS))) {
        procs.signalGroup(record.pid, 'SIGKILL');
        await procs.waitForExit(record.pid, CLOSE_TIMEOUT_MS);
      }
      // The adapter that started its private Xvfb died with the old process.
      await this.stopDisplayOf(record.browserId);
    };
    const handle: BrowserHandle & { toJSON(): object } = {
      browserId: record.browserId,
      host: 'local',
      pid: record.pid,
      cdpPort: record.cdpPort,
      wsEndpoint: record.wsEndpoint,
      headedMode: record.headedMode,
      adopted: true,
      close() {
        closing ??= (async () => {
          // As for a browser we launched: Browser.close makes Chrome write its profile.
          await connections.drop(record.wsEndpoint);
          await askBrowserToQuit(record.wsEndpoint);
          await gone();
        })();
        return closing;
      },
      kill: async () => {
        await connections.drop(record.wsEndpoint);
        procs.signalGroup(record.pid, 'SIGKILL');
        await procs.waitForExit(record.pid, CLOSE_TIMEOUT_MS);
        await this.stopDisplayOf(record.browserId);
      },
      toJSON() {
        return { browserId: record.browserId, pid: record.pid, cdpPort: record.cdpPort, adopted: true };
      },
    };
    if (record.kind === 'shared') await this.keepConnection(record.wsEndpoint, record.browserId);
    return handle;
  }

  async killRemains(record: BrowserRecord): Promise<void> {
    if (await this.isThatBrowser(record)) {
      this.procs.signalGroup(record.pid, 'SIGKILL');
      await this.procs.waitForExit(record.pid, CLOSE_TIMEOUT_MS);
    }
    if (!this.adapter.runningBrowserIds().includes(record.browserId)) await this.stopDisplayOf(record.browserId);
  }

  async isResponsive(handle: BrowserHandle): Promise<boolean> {
    if (!this.procs.isAlive(handle.pid)) return false;
    try {
      // The kept connection stands for /json/version: open means the browser answers.
      await this.connections.ensure(handle.wsEndpoint);
      return true;
    } catch {
      return false;
    }
  }

  sweepOrphans(known: Iterable<string>): Promise<SweepReport> {
    return this.adapter.sweepOrphans(known);
  }

  runningIds(): string[] {
    return this.adapter.runningBrowserIds();
  }

  /** Opens the browser's kept CDP connection; without it, tabs fall back to a connection per operation. */
  private async keepConnection(wsEndpoint: string, browserId: string): Promise<void> {
    await this.connections.ensure(wsEndpoint).catch((error: Error) =>
      this.log.warn({ msg: `Could not keep a CDP connection to the browser: ${error.message}`, browserId }),
    );
  }

  /** The pid is alive and its command line is this host's browser with this id (not a reused pid). */
  private async isThatBrowser(record: BrowserRecord): Promise<boolean> {
    if (!this.procs.isAlive(record.pid)) return false;
    const argv = await this.procs.argv(record.pid);
    return (
      argv !== undefined &&
      switchValue(argv, '--stageflow-browser-id') === record.browserId &&
      switchValue(argv, '--stageflow-host') === this.settings.hostId
    );
  }

  /**
   * Stops the private Xvfb of a browser a previous process launched. The adapter marks
   * each display with STAGEFLOW_HOST / STAGEFLOW_BROWSER_ID in its environment
   * (docs/browser-hosts.md); Xvfb removes its lock and socket on SIGTERM.
   */
  private async stopDisplayOf(browserId: string): Promise<void> {
    for (const pid of await this.procs.pidsNamed('Xvfb')) {
      const env = await this.procs.environ(pid);
      if (env?.['STAGEFLOW_HOST'] !== this.settings.hostId || env['STAGEFLOW_BROWSER_ID'] !== browserId) continue;
      this.procs.signal(pid, 'SIGTERM');
      if (!(await this.procs.waitForExit(pid, 3000))) this.procs.signalGroup(pid, 'SIGKILL');
    }
  }
}

/** The adapters' events as log lines (browser id, pid; never a path). */
export function logBrowserEvent(log: Logger, event: BrowserHostEvent): void {
  const { type, browserId } = event;
  if (type === 'browser_exited' && !event.expected) {
    log.warn({ msg: 'Browser exited on its own; it is restarted at the next stage session of its run', browserId, pid: event.pid, code: event.code, signal: event.signal });
  } else if (type === 'browser_force_killed') {
    log.warn({ msg: 'Browser did not close in time and was killed; its last cookies may be lost', browserId, pid: event.pid });
  } else if (type === 'stale_profile_lock_removed') {
    log.log({ msg: 'Removed a stale profile lock left by a crashed browser', browserId, ownerPid: event.ownerPid, reason: event.reason });
  } else if (type === 'orphan_swept') {
    log.log({ msg: `Swept an orphaned ${event.what}`, browserId, pid: event.pid });
  }
}

function launched(browser: LaunchedBrowser, connections: BrowserConnections): BrowserHandle {
  const handle: BrowserHandle & { toJSON(): object } = {
    browserId: browser.browserId,
    host: 'local',
    pid: browser.pid,
    cdpPort: browser.cdpPort,
    wsEndpoint: browser.wsEndpoint,
    headedMode: browser.headedMode,
    adopted: false,
    close: async () => {
      await connections.drop(browser.wsEndpoint);
      await browser.close();
    },
    kill: async () => {
      await connections.drop(browser.wsEndpoint);
      await browser.kill();
    },
    toJSON: () => ({ browserId: browser.browserId, pid: browser.pid, cdpPort: browser.cdpPort, adopted: false }),
  };
  return handle;
}

async function askBrowserToQuit(wsEndpoint: string): Promise<void> {
  let cdp: CdpConnection | undefined;
  try {
    cdp = await CdpConnection.connect(wsEndpoint, { connectTimeoutMs: 3000, callTimeoutMs: 5000 });
    await cdp.send('Browser.close');
  } catch {
    // The socket closes as Chrome quits, or the browser is wedged: the bounded wait decides.
  } finally {
    await cdp?.close();
  }
}
