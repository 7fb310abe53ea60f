import { spawn } from 'node:child_process';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { homedir, hostname as osHostname, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { browserVersion, readDevToolsActivePort, removeDevToolsActivePort } from '@stageflow/cdp';
import { BrowserHostError } from './browser-host.error';
import type {
  BrowserExit,
  HeadedMode,
  HostCapabilities,
  LaunchedBrowser,
  LaunchOptions,
  ThrowawayCapableAdapter,
} from './browser-host.port';
import { assertSafeId, BROWSER_ID_SWITCH, buildChromeArgs, HOST_ID_SWITCH, switchValue } from './chrome-switches';
import { askBrowserToQuit, settlesWithin } from './graceful-close';
import { findOnPath, headedModeFor } from './headed-mode';
import { isPidAlive, listProcesses, readEnviron, signalGroup, waitForPidExit } from './process-table';
import { clearStaleSingletonLock } from './singleton-lock';
import { DISPLAY_BROWSER_ENV, DISPLAY_HOST_ENV, removeDisplayFiles, VirtualDisplay } from './virtual-display';

/** Something the caller may want to log or turn into a run event. Never carries a profile path. */
export type BrowserHostEvent =
  | { type: 'stale_profile_lock_removed'; browserId: string; ownerPid: number; reason: 'owner_dead' | 'other_host' }
  | { type: 'browser_force_killed'; browserId: string; pid: number }
  | { type: 'browser_exited'; browserId: string; pid: number; code: number | null; signal: string | null; expected: boolean }
  | { type: 'orphan_swept'; browserId: string; what: 'browser' | 'display' | 'profile'; pid?: number };

export interface LocalChromeAdapterOptions {
  /**
   * Chromium binary when a launch names none (`STAGEFLOW_CHROMIUM`, read by the config lib).
   * @defaultValue '/usr/bin/chromium'
   */
  chromiumPath?: string;
  /** The Host's `DISPLAY`, if any (passed in; this lib reads no environment). */
  display?: string;
  /** The Host's `WAYLAND_DISPLAY`, if any. */
  waylandDisplay?: string;
  /** `XDG_RUNTIME_DIR`, where the Wayland socket lives. */
  xdgRuntimeDir?: string;
  /**
   * PATH for finding Xvfb and for the children.
   * @defaultValue '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
   */
  searchPath?: string;
  /**
   * Xvfb binary; `false` never starts one (headed then falls back to headless without a screen).
   * @defaultValue looked up on `searchPath`
   */
  xvfb?: string | false;
  /**
   * Names this host's browsers in their command line; the orphan sweep only touches its own.
   * Keep it stable across restarts of the same host.
   * @defaultValue 'local'
   */
  hostId?: string;
  /** @defaultValue `<os tmpdir>/stageflow-<hostId>-throwaway` */
  throwawayRoot?: string;
  /** Adds `--no-sandbox` (Chromium cannot sandbox itself as root). @defaultValue `process.getuid() === 0` */
  runningAsRoot?: boolean;
  /**
   * This Host runs inside a container (browser-host in compose with the local adapter):
   * Docker's seccomp profile refuses the user namespaces Chromium's own sandbox needs,
   * and the hardened container is the sandbox, so `--no-sandbox` is added. @defaultValue false
   */
  containerSandbox?: boolean;
  /** HOME of the children. @defaultValue os.homedir() */
  home?: string;
  /** Extra environment for Chromium (LANG, TZ, FONTCONFIG_PATH…). `DISPLAY`/`WAYLAND_DISPLAY` here are ignored. */
  childEnv?: Record<string, string>;
  /** @defaultValue process.platform */
  platform?: NodeJS.Platform;
  /** @defaultValue os.hostname() */
  hostname?: string;
  /** Launch to answering `/json/version`. @defaultValue 30000 */
  launchTimeoutMs?: number;
  /** Graceful close before SIGKILL. @defaultValue 10000 */
  closeTimeoutMs?: number;
  /** Orphan sweep: `Browser.close`, then SIGKILL after this. @defaultValue 5000 */
  sweepGraceMs?: number;
  onEvent?: (event: BrowserHostEvent) => void;
}

/** What {@link LocalChromeAdapter.sweepOrphans} removed, by browser id. */
export interface SweepReport {
  browsers: string[];
  displays: string[];
  profiles: string[];
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** A launch on this host: the profile is a folder. */
type LocalLaunch = LaunchOptions & { userDataDir: string };

/**
 * Chromium as a child process of browser-host. See docs/browser-hosts.md for the
 * flags, the headed/Xvfb/headless choice, the SingletonLock rule and graceful close.
 */
export class LocalChromeAdapter implements ThrowawayCapableAdapter {
  readonly kind = 'local' as const;
  readonly hostId: string;
  readonly throwawayRoot: string;
  private readonly chromiumPath: string;
  private readonly searchPath: string;
  private readonly xvfbPath?: string;
  private readonly runningAsRoot: boolean;
  private readonly containerSandbox: boolean;
  private readonly hostname: string;
  private readonly running = new Map<string, LocalBrowser>();
  private readonly launching = new Set<string>();
  private readonly profilesInUse = new Set<string>();

  constructor(private readonly options: LocalChromeAdapterOptions = {}) {
    this.hostId = options.hostId ?? 'local';
    assertSafeId('hostId', this.hostId);
    this.chromiumPath = options.chromiumPath ?? '/usr/bin/chromium';
    this.searchPath = options.searchPath ?? DEFAULT_PATH;
    this.xvfbPath =
      options.xvfb === false ? undefined : (options.xvfb ?? findOnPath('Xvfb', this.searchPath));
    this.runningAsRoot = options.runningAsRoot ?? process.getuid?.() === 0;
    this.containerSandbox = options.containerSandbox ?? false;
    this.hostname = options.hostname ?? osHostname();
    this.throwawayRoot = options.throwawayRoot ?? join(tmpdir(), `stageflow-${this.hostId}-throwaway`);
  }

  capabilities(): HostCapabilities {
    const headedMode = this.headedMode();
    // Any local browser can be streamed over CDP; only a real display is a screen for the operator.
    return { screen: headedMode === 'display', liveView: true, headedMode };
  }

  /** Ids of the browsers this adapter runs now. */
  runningBrowserIds(): string[] {
    return [...this.running.keys()];
  }

  async launch(launch: LaunchOptions): Promise<LaunchedBrowser> {
    const { browserId, userDataDir } = launch;
    assertSafeId('browserId', browserId);
    if (!userDataDir) {
      throw new BrowserHostError('launch_options_invalid', `Browser ${browserId}: the local host needs a profile folder (userDataDir).`);
    }
    const opts: LocalLaunch = { ...launch, userDataDir };
    const profileKey = resolve(opts.userDataDir);
    if (this.running.has(browserId) || this.launching.has(browserId)) {
      throw new BrowserHostError('browser_already_running', `Browser ${browserId} is already running on this host.`);
    }
    if (this.profilesInUse.has(profileKey)) {
      throw new BrowserHostError('profile_in_use', 'The browser profile is in use by another browser of this host. Close it first.');
    }
    const headedMode: HeadedMode = opts.headed ? this.headedMode() : 'headless';
    const args = buildChromeArgs({
      launchArgs: opts.launchArgs,
      userDataDir: opts.userDataDir,
      browserId,
      hostId: this.hostId,
      headless: headedMode === 'headless',
      runningAsRoot: this.runningAsRoot,
      containerSandbox: this.containerSandbox,
    });

    this.launching.add(browserId);
    this.profilesInUse.add(profileKey);
    let display: VirtualDisplay | undefined;
    try {
      await mkdir(opts.userDataDir, { recursive: true, mode: 0o700 });
      const stale = await clearStaleSingletonLock(opts.userDataDir, { hostname: this.hostname, isPidAlive });
      if (stale) {
        this.emit({ type: 'stale_profile_lock_removed', browserId, ownerPid: stale.pid, reason: stale.reason });
      }
      await removeDevToolsActivePort(opts.userDataDir);
      if (headedMode === 'xvfb' && this.xvfbPath) {
        display = await VirtualDisplay.start({
          xvfbPath: this.xvfbPath,
          hostId: this.hostId,
          browserId,
          searchPath: this.searchPath,
        });
      }
      return await this.start(opts, args, headedMode, display, profileKey);
    } catch (error) {
      this.profilesInUse.delete(profileKey);
      await display?.stop();
      throw error;
    } finally {
      this.launching.delete(browserId);
    }
  }

  /** Gracefully closes every browser this adapter runs (host shutdown). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((b) => b.close()));
  }

  /**
   * Ends this host's browsers whose id is not in `knownBrowserIds` (their run is gone),
   * including ones launched before a restart, found by their `--stageflow-host` /
   * `--stageflow-browser-id` switches in /proc. A browser is asked to quit over CDP
   * (`Browser.close`, so it writes its profile), SIGKILL after `sweepGraceMs`. Also
   * stops their private Xvfb displays and deletes leftover throw-away profiles.
   */
  async sweepOrphans(knownBrowserIds: Iterable<string>): Promise<SweepReport> {
    const known = new Set(knownBrowserIds);
    const spare = (id: string): boolean => known.has(id) || this.launching.has(id);
    const report: SweepReport = { browsers: [], displays: [], profiles: [] };
    const grace = this.options.sweepGraceMs ?? 5000;

    for (const [id, browser] of this.running) {
      if (spare(id)) continue;
      await browser.close();
      report.browsers.push(id);
      this.emit({ type: 'orphan_swept', browserId: id, what: 'browser', pid: browser.pid });
    }

    // Look first, act after: a browser that quits can take its display and profile with it.
    const processes = await listProcesses();
    const orphans = processes.filter((p) => {
      if (switchValue(p.argv, HOST_ID_SWITCH) !== this.hostId) return false;
      const id = switchValue(p.argv, BROWSER_ID_SWITCH);
      // Chrome's helpers carry --type=; the browser process is the one to ask to quit.
      return id !== undefined && !spare(id) && !this.running.has(id) && !p.argv.some((a) => a.startsWith('--type='));
    });
    const displays: Array<{ pid: number; id: string; number: number }> = [];
    for (const p of processes.filter((entry) => basename(entry.argv[0] ?? '') === 'Xvfb')) {
      const env = await readEnviron(p.pid);
      const id = env?.[DISPLAY_BROWSER_ENV];
      if (env?.[DISPLAY_HOST_ENV] !== this.hostId || id === undefined || spare(id) || this.running.has(id)) continue;
      displays.push({ pid: p.pid, id, number: Number((p.argv.find((a) => /^:\d+$/.test(a)) ?? ':0').slice(1)) });
    }
    const profiles = (await readdir(this.throwawayRoot).catch(() => [] as string[]))
      .map((name) => ({ name, id: name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name }))
      .filter(({ id }) => !spare(id) && !this.running.has(id));

    await Promise.all(
      orphans.map(async (p) => {
        const id = switchValue(p.argv, BROWSER_ID_SWITCH) as string;
        // Browser.close, as at a run's end: Chrome writes cookies to the profile on a
        // graceful quit. (SIGTERM was tried: Chromium 156 exits 0 without flushing them.)
        const profile = switchValue(p.argv, '--user-data-dir');
        const active = profile
          ? await readDevToolsActivePort(profile, { timeoutMs: 500 }).catch(() => undefined)
          : undefined;
        if (active) await askBrowserToQuit(active.wsEndpoint);
        if (!(await waitForPidExit(p.pid, grace))) signalGroup(p.pid, 'SIGKILL');
        await waitForPidExit(p.pid, grace);
        // Helpers left in the group (spawned detached, the browser pid leads it).
        signalGroup(p.pid, 'SIGKILL');
        report.browsers.push(id);
        this.emit({ type: 'orphan_swept', browserId: id, what: 'browser', pid: p.pid });
      }),
    );

    await Promise.all(
      displays.map(async ({ pid, id, number }) => {
        signalOne(pid, 'SIGTERM');
        if (!(await waitForPidExit(pid, 3000))) {
          signalGroup(pid, 'SIGKILL');
          await waitForPidExit(pid, 3000);
          if (number > 0) await removeDisplayFiles(number);
        }
        report.displays.push(id);
        this.emit({ type: 'orphan_swept', browserId: id, what: 'display', pid });
      }),
    );

    for (const { name, id } of profiles) {
      await rm(join(this.throwawayRoot, name), { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      report.profiles.push(id);
      this.emit({ type: 'orphan_swept', browserId: id, what: 'profile' });
    }
    return report;
  }

  private headedMode(): HeadedMode {
    return headedModeFor({
      platform: this.options.platform ?? process.platform,
      display: this.options.display,
      waylandDisplay: this.options.waylandDisplay,
      xvfbPath: this.xvfbPath,
    });
  }

  private childEnv(mode: HeadedMode, display?: VirtualDisplay): Record<string, string> {
    const env: Record<string, string> = {
      ...this.options.childEnv,
      PATH: this.searchPath,
      HOME: this.options.home ?? homedir(),
    };
    delete env['DISPLAY'];
    delete env['WAYLAND_DISPLAY'];
    if (mode === 'xvfb' && display) env['DISPLAY'] = display.display;
    if (mode === 'display') {
      if (this.options.display) env['DISPLAY'] = this.options.display;
      if (this.options.waylandDisplay) env['WAYLAND_DISPLAY'] = this.options.waylandDisplay;
      if (this.options.xdgRuntimeDir) env['XDG_RUNTIME_DIR'] = this.options.xdgRuntimeDir;
    }
    return env;
  }

  private async start(
    opts: LocalLaunch,
    args: string[],
    headedMode: HeadedMode,
    display: VirtualDisplay | undefined,
    profileKey: string,
  ): Promise<LocalBrowser> {
    const executable = opts.executablePath ?? this.chromiumPath;
    // Detached: the browser leads its own process group, so one signal reaches its helpers too.
    const child = spawn(executable, args, {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: this.childEnv(headedMode, display),
    });
    const stderr = new StderrTail(opts.userDataDir);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => stderr.push(chunk));
    let spawnError: NodeJS.ErrnoException | undefined;
    const processExit = new Promise<BrowserExit>((done) => {
      child.once('exit', (code, signal) => done({ code, signal }));
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) {
          spawnError = error;
          done({ code: null, signal: null });
        }
      });
    });

    const abort = new AbortController();
    void processExit.then((exit) =>
      abort.abort(launchFailure(exit, spawnError, executable, stderr.text(), opts.browserId)),
    );
    const launchTimeoutMs = this.options.launchTimeoutMs ?? 30_000;
    let port: number;
    let wsEndpoint: string;
    try {
      const active = await readDevToolsActivePort(opts.userDataDir, { timeoutMs: launchTimeoutMs, signal: abort.signal });
      await browserVersion(active.port, { timeoutMs: 5000 });
      port = active.port;
      wsEndpoint = active.wsEndpoint;
    } catch (error) {
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      await processExit;
      if (error instanceof BrowserHostError) throw error;
      throw new BrowserHostError(
        'browser_launch_failed',
        `Chromium started but its debugging port never answered (${(error as Error).message})${stderr.hint()}`,
        { browserId: opts.browserId },
      );
    }

    const browser: LocalBrowser = new LocalBrowser({
      browserId: opts.browserId,
      pid: child.pid as number,
      cdpPort: port,
      wsEndpoint,
      headedMode,
      processExit,
      closeTimeoutMs: this.options.closeTimeoutMs ?? 10_000,
      onForceKill: () => this.emit({ type: 'browser_force_killed', browserId: opts.browserId, pid: browser.pid }),
      release: async (exit, expected) => {
        await display?.stop();
        this.running.delete(opts.browserId);
        this.profilesInUse.delete(profileKey);
        this.emit({
          type: 'browser_exited',
          browserId: opts.browserId,
          pid: browser.pid,
          code: exit.code,
          signal: exit.signal,
          expected,
        });
      },
    });
    // Tracked before anything can await: a browser that dies at once is released, not leaked.
    this.running.set(opts.browserId, browser);
    return browser;
  }

  private emit(event: BrowserHostEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A failing event sink must not break launching or closing browsers.
    }
  }
}

interface LocalBrowserInit {
  browserId: string;
  pid: number;
  cdpPort: number;
  wsEndpoint: string;
  headedMode: HeadedMode;
  processExit: Promise<BrowserExit>;
  closeTimeoutMs: number;
  onForceKill: () => void;
  release: (exit: BrowserExit, expected: boolean) => Promise<void>;
}

/**
 * A running local Chromium. Its internals are `#private` and it serializes to its
 * public fields only: it is handed to stages and may end up in a log line, and the
 * process behind it knows the profile path.
 */
class LocalBrowser implements LaunchedBrowser {
  readonly browserId: string;
  readonly pid: number;
  readonly cdpPort: number;
  readonly wsEndpoint: string;
  readonly headedMode: HeadedMode;
  readonly exited: Promise<BrowserExit>;
  readonly #init: LocalBrowserInit;
  #expected = false;
  #hasExited = false;
  #closing?: Promise<void>;

  constructor(init: LocalBrowserInit) {
    this.#init = init;
    this.browserId = init.browserId;
    this.pid = init.pid;
    this.cdpPort = init.cdpPort;
    this.wsEndpoint = init.wsEndpoint;
    this.headedMode = init.headedMode;
    this.exited = init.processExit.then(async (exit) => {
      this.#hasExited = true;
      await init.release(exit, this.#expected);
      return exit;
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#expected = true;
      if (!this.#hasExited) {
        await askBrowserToQuit(this.wsEndpoint);
        const inTime = await settlesWithin(this.#init.processExit, this.#init.closeTimeoutMs);
        if (!inTime) {
          this.#init.onForceKill();
          signalGroup(this.pid, 'SIGKILL');
        }
      }
      await this.exited;
    })();
    return this.#closing;
  }

  async kill(): Promise<void> {
    this.#expected = true;
    if (!this.#hasExited) signalGroup(this.pid, 'SIGKILL');
    await this.exited;
  }

  toJSON(): Pick<LaunchedBrowser, 'browserId' | 'pid' | 'cdpPort' | 'wsEndpoint' | 'headedMode'> {
    const { browserId, pid, cdpPort, wsEndpoint, headedMode } = this;
    return { browserId, pid, cdpPort, wsEndpoint, headedMode };
  }
}

function signalOne(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function launchFailure(
  exit: BrowserExit,
  spawnError: NodeJS.ErrnoException | undefined,
  executable: string,
  stderr: string,
  browserId: string,
): BrowserHostError {
  if (spawnError) {
    return new BrowserHostError(
      'browser_launch_failed',
      spawnError.code === 'ENOENT'
        ? `No Chromium at ${executable}. Install it or set browser.executable_path.`
        : `Chromium at ${executable} could not be started (${spawnError.code ?? spawnError.message}).`,
      { browserId },
    );
  }
  // Exit 21: Chrome's own ProcessSingleton refused the profile (a lock we left alone).
  if (exit.code === 21) {
    return new BrowserHostError('profile_in_use', 'Chromium refused the profile: another browser holds it.', { browserId });
  }
  const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
  const tail = stderr ? ` Last output: ${stderr}` : '';
  return new BrowserHostError('browser_launch_failed', `Chromium exited (${how}) before opening its debugging port.${tail}`, {
    browserId,
    code: exit.code,
    signal: exit.signal,
  });
}

/** Last lines of Chromium's stderr for a launch error, with the profile path scrubbed out. */
class StderrTail {
  private buffer = '';
  constructor(private readonly userDataDir: string) {}
  push(chunk: string): void {
    this.buffer = (this.buffer + chunk).slice(-4000);
  }
  text(): string {
    return this.buffer
      .split(this.userDataDir)
      .join('<profile>')
      .split('\n')
      .filter((line) => line.trim() && !/dbus|Fontconfig/i.test(line))
      .slice(-3)
      .join(' | ');
  }
  hint(): string {
    const text = this.text();
    return text ? `. Last output: ${text}` : '.';
  }
}
