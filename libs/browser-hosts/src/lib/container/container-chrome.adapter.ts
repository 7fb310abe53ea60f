import Docker from 'dockerode';
import { browserVersion } from '@stageflow/cdp';
import { BrowserHostError } from '../browser-host.error';
import type { BrowserExit, BrowserHostAdapter, HostCapabilities, LaunchedBrowser, LaunchOptions } from '../browser-host.port';
import { assertSafeId, buildChromeArgs } from '../chrome-switches';
import { askBrowserToQuit, settlesWithin } from '../graceful-close';
import type { BrowserHostEvent } from '../local-chrome.adapter';
import {
  browserContainerName,
  browserNetworkName,
  demuxDockerLog,
  isSafeName,
  LABELS,
  profileVolumeName,
  relayAddress,
  SANDBOX,
  sandboxContainerSpec,
  sandboxOf,
  type RelayExposure,
  type SandboxContainer,
} from './sandbox-container';

export interface ContainerChromeAdapterOptions {
  /** A dockerode client; tests pass their own. @defaultValue `new Docker({ socketPath })` */
  docker?: Docker;
  /** The Docker engine's socket (read by the config lib). @defaultValue '/var/run/docker.sock' */
  socketPath?: string;
  /** `browser.container.image`. */
  image: string;
  /** `browser.container.shm_size`, bytes. */
  shmSizeBytes: number;
  /** `browser.container.memory`, bytes (also the memory + swap limit). */
  memoryBytes: number;
  /** `browser.container.pids_limit`. */
  pidsLimit: number;
  /** Labels this host's containers; the sweep touches only its own. Stable across restarts. */
  hostId: string;
  /**
   * The Docker network browser-host itself is on when it runs in compose
   * (`STAGEFLOW_BROWSER_NETWORK`): containers join it and publish nothing. Unset:
   * browser-host runs on the Docker host; containers join `sf-browsers-<hostId>` and
   * their relay is published on 127.0.0.1 only.
   */
  network?: string;
  /** Container start to `/json/version` answering. @defaultValue 30000 */
  launchTimeoutMs?: number;
  /** Graceful close (`Browser.close`) before the container is killed. @defaultValue 10000 */
  closeTimeoutMs?: number;
  onEvent?: (event: BrowserHostEvent) => void;
}

/** A Docker API error as dockerode reports it. */
interface DockerError extends Error {
  statusCode?: number;
  code?: string;
  json?: { message?: string };
}

const isNotFound = (error: unknown): boolean => (error as DockerError)?.statusCode === 404;
/** Docker checks the network when the container starts (or is created): `network <name> not found`. */
const isMissingNetwork = (error: unknown): boolean =>
  isNotFound(error) && /network .* not found/i.test((error as DockerError).json?.message ?? (error as Error).message ?? '');

/**
 * One container per shared browser, from the sandbox image: read-only, non-root, no
 * capabilities, no new privileges, pids/memory/shm limits, the profile in the Docker
 * volume `sf-profile-<scope>-<profile>`, labelled with its run, scope, profile, host and
 * browser id. See docs/browser-hosts.md, "The container host".
 */
export class ContainerChromeAdapter implements BrowserHostAdapter {
  readonly kind = 'container' as const;
  readonly hostId: string;
  readonly exposure: RelayExposure;
  private readonly docker: Docker;
  private readonly running = new Map<string, ContainerBrowser>();
  private readonly launching = new Set<string>();
  /** Volume name → `<scope>/<profile>` of the browser using it (two pairs can share a name). */
  private readonly volumesInUse = new Map<string, string>();
  private networkReady?: Promise<void>;

  constructor(private readonly options: ContainerChromeAdapterOptions) {
    this.hostId = options.hostId;
    assertSafeId('hostId', this.hostId);
    this.docker = options.docker ?? new Docker({ socketPath: options.socketPath ?? '/var/run/docker.sock' });
    this.exposure = options.network
      ? { mode: 'attached', network: options.network }
      : { mode: 'published', network: browserNetworkName(this.hostId) };
  }

  /**
   * Every container has its own Xvfb: headed, a desktop user agent, streamable to the
   * live view, but no window on the Host's screen.
   */
  capabilities(): HostCapabilities {
    return { screen: false, liveView: true, headedMode: 'xvfb' };
  }

  /** Ids of the browsers this adapter runs now (launched or adopted). */
  runningBrowserIds(): string[] {
    return [...this.running.keys()];
  }

  /** The container of a browser this adapter runs. */
  containerIdOf(browserId: string): string | undefined {
    return this.running.get(browserId)?.containerId;
  }

  async launch(opts: LaunchOptions): Promise<LaunchedBrowser> {
    const { browserId, owner } = opts;
    assertSafeId('browserId', browserId);
    if (!owner || !isSafeName(owner.scope) || !isSafeName(owner.profile) || !owner.runId) {
      throw new BrowserHostError(
        'launch_options_invalid',
        `Browser ${browserId}: the container host needs the run, scope and profile (safe names) of the browser it starts.`,
      );
    }
    if (this.running.has(browserId) || this.launching.has(browserId)) {
      throw new BrowserHostError('browser_already_running', `Browser ${browserId} is already running on this host.`);
    }
    const volume = profileVolumeName(owner.scope, owner.profile);
    const user = this.volumesInUse.get(volume);
    if (user !== undefined && user !== `${owner.scope}/${owner.profile}`) throw volumeConflict(volume, user, owner.scope, owner.profile);
    if (user !== undefined) {
      throw new BrowserHostError('profile_in_use', 'The browser profile is in use by another browser container of this host. Close it first.');
    }
    const headedMode = opts.headed ? 'xvfb' : 'headless';
    const args = buildChromeArgs({
      launchArgs: opts.launchArgs,
      userDataDir: SANDBOX.profileMount,
      browserId,
      hostId: this.hostId,
      headless: headedMode === 'headless',
      runningAsRoot: false,
      containerSandbox: true,
      debuggingPort: SANDBOX.cdpPort,
      processMarkers: false,
    });

    this.launching.add(browserId);
    this.volumesInUse.set(volume, `${owner.scope}/${owner.profile}`);
    try {
      // A container of this browser that outlived its record (browser-host died between
      // starting it and registering it, or it crashed): closed gracefully and removed.
      await this.removeLeftover(browserId);
      await this.ensureVolume(volume, owner.scope, owner.profile);
      await this.assertVolumeFree(volume);
      await this.ensureNetwork();
      const spec = sandboxContainerSpec({
        browserId,
        hostId: this.hostId,
        owner,
        headedMode,
        args,
        image: this.options.image,
        shmSizeBytes: this.options.shmSizeBytes,
        memoryBytes: this.options.memoryBytes,
        pidsLimit: this.options.pidsLimit,
        exposure: this.exposure,
      });
      const createAndStart = async (): Promise<LaunchedBrowser> => {
        const container = await this.docker.createContainer(spec).catch((error: unknown) => {
          throw isMissingNetwork(error) ? error : this.dockerFailure(error, browserId);
        });
        return this.start(container, browserId, volume, headedMode);
      };
      try {
        return await createAndStart();
      } catch (error) {
        // Our own network was removed behind our back (docker network prune): make it again, once.
        if (!isMissingNetwork(error) || this.exposure.mode !== 'published') throw error;
        this.networkReady = undefined;
        await this.ensureNetwork();
        return await createAndStart();
      }
    } catch (error) {
      this.volumesInUse.delete(volume);
      throw error instanceof BrowserHostError ? error : this.dockerFailure(error, browserId);
    } finally {
      this.launching.delete(browserId);
    }
  }

  /**
   * Takes over the running container of a browser a previous browser-host process
   * started: found by name and checked by its labels (this host, this browser id), its
   * relay answering `/json/version`. `undefined` otherwise.
   */
  async adopt(browserId: string): Promise<LaunchedBrowser | undefined> {
    assertSafeId('browserId', browserId);
    const current = this.running.get(browserId);
    if (current) return current;
    const container = this.docker.getContainer(browserContainerName(browserId));
    const info = await container.inspect().catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw this.dockerFailure(error, browserId);
    });
    const labels = info?.Config.Labels ?? {};
    if (!info || !info.State.Running || labels[LABELS.host] !== this.hostId || labels[LABELS.browser] !== browserId) {
      return undefined;
    }
    const address = relayAddress(info, this.exposure);
    if (!address) return undefined;
    const version = await browserVersion(address.port, { host: address.host, timeoutMs: 3000 }).catch(() => undefined);
    if (!version) return undefined;
    const headedMode = labels[LABELS.headedMode] === 'xvfb' ? 'xvfb' : 'headless';
    const volume = profileVolumeName(labels[LABELS.scope] ?? '', labels[LABELS.profile] ?? '');
    this.volumesInUse.set(volume, `${labels[LABELS.scope]}/${labels[LABELS.profile]}`);
    return this.track(container, info, browserId, volume, headedMode, address, version.webSocketDebuggerUrl);
  }

  /**
   * Removes what is left of a browser's container (stopped, or running but not
   * answering): killed, then removed. The profile volume stays.
   */
  async removeRemains(browserId: string): Promise<boolean> {
    assertSafeId('browserId', browserId);
    const current = this.running.get(browserId);
    if (current) {
      await current.kill();
      return true;
    }
    const container = this.docker.getContainer(browserContainerName(browserId));
    const info = await container.inspect().catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!info || info.Config.Labels?.[LABELS.host] !== this.hostId) return false;
    await container.remove({ force: true, v: true }).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    return true;
  }

  /** This host's browser containers (running or not), from their labels. */
  async containers(): Promise<SandboxContainer[]> {
    const list = await this.docker.listContainers({ all: true, filters: { label: [`${LABELS.host}=${this.hostId}`] } });
    return list.flatMap((c) => sandboxOf(c.Id, c.Labels, c.State === 'running') ?? []);
  }

  /**
   * Removes this host's containers that `spare` does not keep and this adapter does
   * not run or launch: a running one is first closed gracefully (`Browser.close`
   * through its relay, so Chrome writes cookies to the profile volume), then removed.
   * Returns their browser ids.
   */
  async sweepOrphans(spare: (container: SandboxContainer) => boolean | Promise<boolean>): Promise<string[]> {
    const swept: string[] = [];
    for (const found of await this.containers()) {
      if (this.running.has(found.browserId) || this.launching.has(found.browserId)) continue;
      if (await spare(found)) continue;
      await this.retire(this.docker.getContainer(found.containerId), found.browserId);
      swept.push(found.browserId);
      this.emit({ type: 'orphan_swept', browserId: found.browserId, what: 'browser' });
    }
    return swept;
  }

  /**
   * Removes the profile's volume `sf-profile-<scope>-<profile>` (its cookies and site
   * data), whichever host id made it: a new profile of the same name must start logged
   * out. A volume labelled for another (scope, profile) pair is not this profile's data
   * and is left alone (`absent`). Idempotent: no volume is `absent`.
   *
   * @throws `profile_in_use` (409) while a browser of this adapter, or any container
   * (running or stopped, any host or tool), uses the volume.
   */
  async removeProfileVolume(scope: string, profile: string): Promise<'removed' | 'absent'> {
    if (!isSafeName(scope) || !isSafeName(profile)) {
      throw new BrowserHostError('launch_options_invalid', 'The scope and profile of a profile volume must be safe names.');
    }
    const volume = profileVolumeName(scope, profile);
    if (this.volumesInUse.has(volume)) {
      throw new BrowserHostError('profile_in_use', `A browser of this host runs on profile "${profile}" now. Wait for its run to end, or cancel it, then delete again.`, { profile });
    }
    const info = await this.docker
      .getVolume(volume)
      .inspect()
      .catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!info) return 'absent';
    const labels = info.Labels ?? {};
    const other = (key: string, want: string) => labels[key] !== undefined && labels[key] !== want;
    if (other(LABELS.scope, scope) || other(LABELS.profile, profile)) return 'absent';
    await this.assertNoContainerOn(volume, profile);
    try {
      await this.docker.getVolume(volume).remove();
    } catch (error) {
      if (isNotFound(error)) return 'absent';
      // A container was created on it since we looked.
      if ((error as DockerError).statusCode === 409) await this.assertNoContainerOn(volume, profile);
      throw error;
    }
    return 'removed';
  }

  /**
   * Removes the profile volumes this host made (label `stageflow.host`) in `scope`
   * whose profile `keep` does not keep and that no container (of any host, in any
   * state) uses. Volumes without this host's label, of another scope, or whose name
   * is not `sf-profile-<scope>-<profile>` of their own labels are never touched.
   * Returns the profiles whose volume went.
   */
  async sweepProfileVolumes(scope: string, keep: (profile: string) => boolean | Promise<boolean>): Promise<string[]> {
    const { Volumes } = await this.docker.listVolumes({ filters: { label: [`${LABELS.host}=${this.hostId}`, `${LABELS.scope}=${scope}`] } });
    const removed: string[] = [];
    for (const found of Volumes ?? []) {
      const labels = found.Labels ?? {};
      const profile = labels[LABELS.profile];
      if (labels[LABELS.host] !== this.hostId || labels[LABELS.scope] !== scope || !profile || !isSafeName(profile)) continue;
      if (found.Name !== profileVolumeName(scope, profile) || this.volumesInUse.has(found.Name)) continue;
      if (await keep(profile)) continue;
      const users = await this.docker.listContainers({ all: true, filters: { volume: [found.Name] } });
      if (users.length > 0) continue;
      try {
        await this.docker.getVolume(found.Name).remove();
      } catch (error) {
        // Gone already, or a container took it meanwhile: either way not ours to remove now.
        const status = (error as DockerError).statusCode;
        if (status === 404 || status === 409) continue;
        throw error;
      }
      removed.push(profile);
    }
    return removed;
  }

  private async assertNoContainerOn(volume: string, profile: string): Promise<void> {
    const users = await this.docker.listContainers({ all: true, filters: { volume: [volume] } });
    if (users.length > 0) {
      const names = users.map((u) => u.Names[0]?.replace(/^\//, '') ?? u.Id.slice(0, 12));
      throw new BrowserHostError(
        'profile_in_use',
        `Profile "${profile}"'s browser container still exists (${names.join(', ')}). Wait for its run to end, or cancel it ` +
          '(browser-host then removes the container), then delete again.',
        { profile, containers: names },
      );
    }
  }

  /** Gracefully closes every browser this adapter runs (their containers are removed). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((b) => b.close()));
  }

  private async start(
    container: Docker.Container,
    browserId: string,
    volume: string,
    headedMode: 'xvfb' | 'headless',
  ): Promise<LaunchedBrowser> {
    let stoppedEarly: BrowserExit | undefined;
    try {
      await container.start();
      const stopped = waitForStop(container);
      void stopped.then((exit) => (stoppedEarly = exit));
      const info = await container.inspect();
      const address = relayAddress(info, this.exposure);
      if (!address) throw new Error(`the container has no relay address on ${this.exposure.network}`);
      const deadline = Date.now() + (this.options.launchTimeoutMs ?? 30_000);
      for (;;) {
        if (stoppedEarly) {
          const how = stoppedEarly.code === null ? 'it was removed' : `code ${stoppedEarly.code}`;
          const output = await this.logTail(container);
          const oomKilled = (await container.inspect().catch(() => undefined))?.State.OOMKilled === true;
          throw new BrowserHostError(
            'browser_launch_failed',
            `The browser container exited (${how}) before Chromium's debugging port answered.${this.limitHint(output, oomKilled)}` +
              `${output ? ` Last output: ${output}` : ''}`,
            { browserId, code: stoppedEarly.code },
          );
        }
        // Through the relay: its answer proves Chrome, socat and the port binding all work.
        const version = await browserVersion(address.port, { host: address.host, timeoutMs: 1000 }).catch(() => undefined);
        if (version) return this.track(container, info, browserId, volume, headedMode, address, version.webSocketDebuggerUrl, stopped);
        if (Date.now() > deadline) {
          throw new BrowserHostError(
            'browser_launch_failed',
            `Chromium in its container did not answer on its debugging port within ${this.options.launchTimeoutMs ?? 30_000} ms.` +
              `${await this.logTail(container).then((t) => (t ? ` Last output: ${t}` : ''))}`,
            { browserId },
          );
        }
        await sleep(50);
      }
    } catch (error) {
      await container.remove({ force: true, v: true }).catch(() => undefined);
      throw error;
    }
  }

  private track(
    container: Docker.Container,
    info: Docker.ContainerInspectInfo,
    browserId: string,
    volume: string,
    headedMode: 'xvfb' | 'headless',
    address: { host: string; port: number },
    reportedEndpoint: string,
    stopped: Promise<BrowserExit> = waitForStop(container),
  ): ContainerBrowser {
    // Chrome builds the URL from the request's Host header, which was our address; we
    // rebuild it anyway so the endpoint never depends on what a relay passes along.
    const path = new URL(reportedEndpoint).pathname;
    const browser: ContainerBrowser = new ContainerBrowser({
      browserId,
      containerId: info.Id,
      pid: info.State.Pid,
      cdpPort: address.port,
      wsEndpoint: `ws://${address.host}:${address.port}${path}`,
      headedMode,
      container,
      stopped,
      closeTimeoutMs: this.options.closeTimeoutMs ?? 10_000,
      onForceKill: () => this.emit({ type: 'browser_force_killed', browserId, pid: browser.pid }),
      release: async (exit, expected) => {
        if (this.running.get(browserId) === browser) this.running.delete(browserId);
        this.volumesInUse.delete(volume);
        this.emit({ type: 'browser_exited', browserId, pid: browser.pid, code: exit.code, signal: exit.signal, expected });
      },
    });
    this.running.set(browserId, browser);
    return browser;
  }

  /** Closes a container this adapter does not track gracefully, then removes it. */
  private async retire(container: Docker.Container, browserId: string): Promise<void> {
    const info = await container.inspect().catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!info) return;
    if (info.State.Running) {
      const address = relayAddress(info, this.exposure);
      const version = address
        ? await browserVersion(address.port, { host: address.host, timeoutMs: 2000 }).catch(() => undefined)
        : undefined;
      if (address && version) {
        await askBrowserToQuit(`ws://${address.host}:${address.port}${new URL(version.webSocketDebuggerUrl).pathname}`);
      }
      const stopped = await settlesWithin(waitForStop(container), this.options.closeTimeoutMs ?? 10_000);
      if (!stopped) {
        this.emit({ type: 'browser_force_killed', browserId, pid: info.State.Pid });
        await container.kill().catch(() => undefined);
      }
    }
    await container.remove({ force: true, v: true }).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
  }

  private async removeLeftover(browserId: string): Promise<void> {
    const container = this.docker.getContainer(browserContainerName(browserId));
    const info = await container.inspect().catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!info) return;
    if (info.Config.Labels?.[LABELS.host] !== this.hostId) {
      throw new BrowserHostError(
        'profile_in_use',
        `Browser ${browserId} already runs in a container of another Stageflow host on this Docker daemon. Run one Host per Docker daemon.`,
        { browserId },
      );
    }
    await this.retire(container, browserId);
  }

  /** No other running container (any host, any tool) may have the profile volume mounted. */
  private async assertVolumeFree(volume: string): Promise<void> {
    const users = await this.docker.listContainers({ filters: { volume: [volume] } });
    if (users.length > 0) {
      throw new BrowserHostError(
        'profile_in_use',
        `The browser profile is in use by a running container (${users.map((u) => u.Names[0]?.replace(/^\//, '') ?? u.Id.slice(0, 12)).join(', ')}). Close it first.`,
      );
    }
  }

  private async ensureVolume(volume: string, scope: string, profile: string): Promise<void> {
    const existing = await this.docker
      .getVolume(volume)
      .inspect()
      .catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (!existing) {
      // A new volume takes the owner and mode (chrome, 0700) of the image's /profile on first mount.
      // The host label lets this host's startup sweep find the volumes it made (and only those).
      await this.docker.createVolume({ Name: volume, Labels: { [LABELS.scope]: scope, [LABELS.profile]: profile, [LABELS.host]: this.hostId } });
      return;
    }
    const labels = existing.Labels ?? {};
    const other = (key: string, want: string) => labels[key] !== undefined && labels[key] !== want;
    if (other(LABELS.scope, scope) || other(LABELS.profile, profile)) {
      throw volumeConflict(volume, `${labels[LABELS.scope]}/${labels[LABELS.profile]}`, scope, profile);
    }
  }

  private ensureNetwork(): Promise<void> {
    this.networkReady ??= this.prepareNetwork().catch((error: unknown) => {
      this.networkReady = undefined;
      throw error;
    });
    return this.networkReady;
  }

  private async prepareNetwork(): Promise<void> {
    const { network, mode } = this.exposure;
    const found = await this.docker
      .getNetwork(network)
      .inspect()
      .catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
    if (found) return;
    if (mode === 'attached') {
      throw new BrowserHostError(
        'browser_launch_failed',
        `Docker network "${network}" (STAGEFLOW_BROWSER_NETWORK) does not exist. Set it to the network browser-host runs on ` +
          '(docker inspect <browser-host container> lists it), or unset it when browser-host runs on the Docker host.',
      );
    }
    await this.docker
      .createNetwork({
        Name: network,
        Driver: 'bridge',
        CheckDuplicate: true,
        // No traffic between browser containers: one run's page cannot reach another
        // run's debugging relay. The Docker host still reaches each one.
        Options: { 'com.docker.network.bridge.enable_icc': 'false' },
        Labels: { [LABELS.host]: this.hostId },
      })
      .catch((error: unknown) => {
        // Created by a concurrent launch a moment ago.
        if ((error as DockerError).statusCode !== 409) throw error;
      });
  }

  /** The last lines Chromium and the entry script wrote, without the D-Bus noise of a container with no bus. */
  private async logTail(container: Docker.Container): Promise<string> {
    const raw = await container.logs({ stdout: true, stderr: true, tail: 40 }).catch(() => undefined);
    if (!raw) return '';
    return demuxDockerLog(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)))
      .split('\n')
      .filter((line) => line.trim() && !/dbus|Fontconfig|object_proxy|crashpad/i.test(line))
      .slice(-3)
      .join(' | ');
  }

  /** Which Host config limit a dead container ran into, in the operator's words. */
  private limitHint(output: string, oomKilled: boolean): string {
    if (oomKilled) {
      return ` It ran out of memory: raise browser.container.memory (now ${Math.round(this.options.memoryBytes / 1024 / 1024)}m; Chromium wants 512m or more).`;
    }
    if (/pthread_create|Resource temporarily unavailable|fork.*failed/i.test(output)) {
      return ` It could not start a process or thread: raise browser.container.pids_limit (now ${this.options.pidsLimit}; ` +
        'Chromium needs about 100 processes and threads for one tab, and more per tab).';
    }
    return '';
  }

  private dockerFailure(error: unknown, browserId: string): BrowserHostError {
    const e = error as DockerError;
    const message = e?.json?.message ?? e?.message ?? String(error);
    if (e?.statusCode === 404 && /no such image/i.test(message)) {
      return new BrowserHostError(
        'browser_launch_failed',
        `Image ${this.options.image} (browser.container.image) is not on this Docker host. Build it: ` +
          'docker build -f docker/Dockerfile.browser-sandbox -t stageflow-browser-sandbox:local docker',
        { browserId },
      );
    }
    if (e?.code === 'ENOENT' || e?.code === 'ECONNREFUSED' || e?.code === 'EACCES') {
      return new BrowserHostError(
        'browser_launch_failed',
        `Docker is not reachable (${e.code}) at ${this.options.socketPath ?? '/var/run/docker.sock'}: the container host needs the Docker engine's socket.`,
        { browserId },
      );
    }
    return new BrowserHostError('browser_launch_failed', `Docker refused to start the browser container: ${message}`, { browserId });
  }

  private emit(event: BrowserHostEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A failing event sink must not break launching or closing browsers.
    }
  }
}

interface ContainerBrowserInit {
  browserId: string;
  containerId: string;
  pid: number;
  cdpPort: number;
  wsEndpoint: string;
  headedMode: 'xvfb' | 'headless';
  container: Docker.Container;
  stopped: Promise<BrowserExit>;
  closeTimeoutMs: number;
  onForceKill: () => void;
  release: (exit: BrowserExit, expected: boolean) => Promise<void>;
}

/**
 * A browser in its container. The container lives as long as Chromium (the image's
 * entry script ends as Chromium), so "exited" is "the container stopped". Closing or
 * killing it also removes the container; the profile volume stays.
 */
export class ContainerBrowser implements LaunchedBrowser {
  readonly browserId: string;
  readonly containerId: string;
  readonly pid: number;
  readonly cdpPort: number;
  readonly wsEndpoint: string;
  readonly headedMode: 'xvfb' | 'headless';
  readonly exited: Promise<BrowserExit>;
  readonly #init: ContainerBrowserInit;
  #expected = false;
  #hasExited = false;
  #closing?: Promise<void>;

  constructor(init: ContainerBrowserInit) {
    this.#init = init;
    this.browserId = init.browserId;
    this.containerId = init.containerId;
    this.pid = init.pid;
    this.cdpPort = init.cdpPort;
    this.wsEndpoint = init.wsEndpoint;
    this.headedMode = init.headedMode;
    this.exited = init.stopped.then(async (exit) => {
      this.#hasExited = true;
      await init.release(exit, this.#expected);
      return exit;
    });
  }

  /** Whether the container still runs (Docker's view; a crash or `docker kill` ends it). */
  async isRunning(): Promise<boolean> {
    if (this.#hasExited) return false;
    const info = await this.#init.container.inspect().catch(() => undefined);
    return info?.State.Running === true;
  }

  /**
   * `Browser.close` through the relay (Chrome writes cookies to the profile volume), a
   * bounded wait for the container to stop, `docker kill` as the fallback, then the
   * container is removed. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#expected = true;
      if (!this.#hasExited) {
        await askBrowserToQuit(this.wsEndpoint);
        if (!(await settlesWithin(this.#init.stopped, this.#init.closeTimeoutMs))) {
          this.#init.onForceKill();
          await this.#init.container.kill().catch(() => undefined);
        }
      }
      await this.exited;
      await removeContainer(this.#init.container);
    })();
    return this.#closing;
  }

  /** `docker kill` (SIGKILL) now, then the container is removed. */
  async kill(): Promise<void> {
    this.#expected = true;
    if (!this.#hasExited) await this.#init.container.kill().catch(() => undefined);
    await this.exited;
    await removeContainer(this.#init.container);
  }

  toJSON(): Pick<LaunchedBrowser, 'browserId' | 'pid' | 'cdpPort' | 'wsEndpoint' | 'headedMode'> & { containerId: string } {
    const { browserId, pid, cdpPort, wsEndpoint, headedMode, containerId } = this;
    return { browserId, pid, cdpPort, wsEndpoint, headedMode, containerId };
  }
}

function volumeConflict(volume: string, holder: string, scope: string, profile: string): BrowserHostError {
  const [holderScope, holderProfile] = holder.split('/');
  return new BrowserHostError(
    'profile_volume_conflict',
    `Docker volume ${volume} holds profile "${holderProfile}" of scope "${holderScope}", not "${profile}" of "${scope}": ` +
      'both names make the same volume name. Rename one of the profiles.',
    { volume },
  );
}

async function removeContainer(container: Docker.Container): Promise<void> {
  await container.remove({ force: true, v: true }).catch((error: unknown) => {
    if (!isNotFound(error) && (error as DockerError).statusCode !== 409) throw error;
  });
}

/**
 * Resolves when the container has stopped (or is gone). `docker wait` is one long
 * request; if the connection to Docker drops, the state is looked up and the wait
 * resumed, so a browser-host that lost Docker for a moment still sees the exit.
 */
async function waitForStop(container: Docker.Container): Promise<BrowserExit> {
  for (;;) {
    try {
      const result = (await container.wait()) as { StatusCode?: number };
      return { code: typeof result.StatusCode === 'number' ? result.StatusCode : null, signal: null };
    } catch (error) {
      if (isNotFound(error)) return { code: null, signal: null };
      const info = await container.inspect().catch((e: unknown) => (isNotFound(e) ? null : undefined));
      if (info === null) return { code: null, signal: null };
      if (info && !info.State.Running) return { code: info.State.ExitCode, signal: null };
      await sleep(1000);
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
