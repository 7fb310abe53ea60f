/**
 * How a headed browser gets its screen:
 * - `display`: the Host's own screen (`DISPLAY` / `WAYLAND_DISPLAY`, macOS, Windows);
 * - `xvfb`: a private virtual display owned by this browser (headed, but nothing is
 *   shown on the Host; same user agent as a desktop);
 * - `headless`: `--headless=new` (the user agent says `HeadlessChrome`).
 */
export type HeadedMode = 'display' | 'xvfb' | 'headless';

/** What a host can offer, so the login stage can pick its hand-off. */
export interface HostCapabilities {
  /** A window the operator can see on the Host's own screen. */
  screen: boolean;
  /** The browser can be streamed to the console's live view (CDP screencast). */
  liveView: boolean;
  /** What a launch with `headed: true` gets on this host. */
  headedMode: HeadedMode;
}

/** Which run and profile a shared browser serves. */
export interface BrowserOwner {
  runId: string;
  /** Owner scope, set by the Host (`local` today). */
  scope: string;
  /** Profile name, one safe segment. */
  profile: string;
}

export interface LaunchOptions {
  /** Stable id of this browser (registry key); one safe path segment. */
  browserId: string;
  /**
   * Chrome user data dir (the profile). Created 0700 when missing. Never returned by
   * the adapter. Required by the local adapter; the container host keeps the profile
   * in a Docker volume instead and ignores it.
   */
  userDataDir?: string;
  /**
   * The run and profile the browser serves. Required by the container host: it names
   * the profile volume (`sf-profile-<scope>-<profile>`) and labels the container.
   */
  owner?: BrowserOwner;
  /** `false` always runs headless; `true` gets the host's {@link HostCapabilities.headedMode}. */
  headed: boolean;
  /** Operator switches from host config (`browser.launch_args`); they come after the Host's own switches. */
  launchArgs: string[];
  /**
   * Absolute path to Chrome/Chromium (`browser.executable_path`); the adapter's default
   * when unset. A path on the Host: the container host always runs its image's Chromium.
   */
  executablePath?: string;
}

/** How a browser process ended. */
export interface BrowserExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running browser. Holds no profile path: it is handed to stages and the relay. */
export interface LaunchedBrowser {
  readonly browserId: string;
  /** Debugging port: on 127.0.0.1, or of a browser container's relay on the stack network. */
  readonly cdpPort: number;
  /**
   * Browser-level endpoint, `ws://127.0.0.1:<port>/devtools/browser/<id>`; for a browser
   * container on the stack network, `ws://<container address>:<port>/…`.
   */
  readonly wsEndpoint: string;
  /** The browser's process id on the Host; for a container, its init process as the Docker host sees it. */
  readonly pid: number;
  /** What this launch actually got; `headless` after a quiet fallback, so the caller can emit an event. */
  readonly headedMode: HeadedMode;
  /**
   * Graceful close: `Browser.close` over CDP, a bounded wait for the process to exit,
   * SIGKILL as a fallback. A graceful exit is what makes Chrome write cookies to the
   * profile. Idempotent; resolves once the process and everything it owned are gone.
   */
  close(): Promise<void>;
  /** SIGKILL now (crash tests, a wedged browser). Resolves once the process is gone. */
  kill(): Promise<void>;
  /** Resolves when the browser has exited and its private resources (display, temp profile) are released. */
  readonly exited: Promise<BrowserExit>;
}

/** The port: one adapter per kind of host (local Chromium, one container per browser). */
export interface BrowserHostAdapter {
  readonly kind: 'local' | 'container';
  capabilities(): HostCapabilities;
  /**
   * Starts a browser on a profile.
   *
   * @throws BrowserHostError `profile_in_use` when a live browser holds the profile;
   *   `launch_arg_rejected`, `browser_id_invalid`, `browser_launch_failed`,
   *   `launch_options_invalid`; the container host also `profile_volume_conflict`.
   */
  launch(opts: LaunchOptions): Promise<LaunchedBrowser>;
}

/** An adapter whose browsers can run on a throw-away profile in a folder it sweeps (the local one). */
export interface ThrowawayCapableAdapter extends BrowserHostAdapter {
  /** Folder (0700) holding throw-away profiles, one `<browserId>.<random>` folder each. */
  readonly throwawayRoot: string;
}
