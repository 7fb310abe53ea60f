import { BrowserHostError } from './browser-host.error';

/**
 * The Host's own switches, first on every browser it launches, ahead of the
 * operator's `launch_args`. A copy of host-config's `HOST_SWITCHES` until the lead
 * dedupes them; keep the two lists equal.
 * - `--deny-permission-prompts`: location/camera/notification requests get "denied" at
 *   once; nobody can answer a native prompt on a screenless host or in the live view.
 * - `--password-store=basic`, `--disable-sync`: no keyring prompt, no sign-in to Google.
 * - `--disable-background-networking`, `--disable-component-update`: the network is
 *   closed, and the component updater once filled a /tmp with 125 GB elsewhere.
 * - `--no-first-run`: no welcome tab or first-run dialog.
 */
export const HOST_SWITCHES: readonly string[] = [
  '--deny-permission-prompts',
  '--password-store=basic',
  '--disable-sync',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Switch that marks a process as a Stageflow browser so a restarted host can find it in /proc. Chrome ignores unknown switches. */
export const BROWSER_ID_SWITCH = '--stageflow-browser-id';
/** Which host launched the browser; the orphan sweep only touches its own host's browsers. */
export const HOST_ID_SWITCH = '--stageflow-host';

/**
 * Switches the adapter sets itself. An operator value would move the profile, fix or
 * expose the debugging port, let web pages talk to it, hide the browser from the
 * sweep, or make the reported headed mode a lie.
 */
const ADAPTER_OWNED = new Set([
  'user-data-dir',
  'remote-debugging-port',
  'remote-debugging-pipe',
  'remote-debugging-address',
  'remote-allow-origins',
  'headless',
  'stageflow-browser-id',
  'stageflow-host',
]);

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Checks an id that goes into a switch value and a folder name. */
export function assertSafeId(what: 'browserId' | 'hostId', id: string): void {
  if (!SAFE_ID.test(id) || id.includes('..')) {
    throw new BrowserHostError(
      'browser_id_invalid',
      `${what} "${id}" must be 1-128 letters, digits, "_", "." or "-", starting with a letter or digit.`,
    );
  }
}

/** `--name=value` → `name` (lower case). */
export function switchName(arg: string): string {
  const body = arg.replace(/^--/, '');
  const eq = body.indexOf('=');
  return (eq === -1 ? body : body.slice(0, eq)).toLowerCase();
}

export interface ChromeArgsInput {
  launchArgs: readonly string[];
  userDataDir: string;
  browserId: string;
  hostId: string;
  headless: boolean;
  /** Chromium cannot start its sandbox as root, so `--no-sandbox` is added then. */
  runningAsRoot: boolean;
  /**
   * The browser runs in a container that is its sandbox (no capabilities, no new
   * privileges, Docker's seccomp profile, which refuses the user namespaces Chromium's
   * own sandbox needs), so `--no-sandbox` is added. @defaultValue false
   */
  containerSandbox?: boolean;
  /**
   * Debugging port. 0: Chrome picks a free one and writes it to DevToolsActivePort (a
   * shared machine). A container has a network namespace of its own, so its port is
   * fixed and its relay knows where to forward. @defaultValue 0
   */
  debuggingPort?: number;
  /**
   * Marks the command line with {@link HOST_ID_SWITCH} and {@link BROWSER_ID_SWITCH} so a
   * restarted host finds its browsers in /proc. Off for containers: they are found by
   * their labels, and their Chromium shows in the Docker host's /proc too, where the
   * local sweep would take a marked one for a local orphan. @defaultValue true
   */
  processMarkers?: boolean;
}

/**
 * The full argument list: {@link HOST_SWITCHES} first, then the operator's launch
 * args (exact repeats dropped: listing a host switch again has no effect), then the
 * switches the adapter owns, then `about:blank` so no new-tab page fetches anything.
 *
 * @throws BrowserHostError `launch_arg_rejected` for an arg that is not a `--switch`,
 *   holds a newline or NUL, or names an adapter-owned switch.
 */
export function buildChromeArgs(input: ChromeArgsInput): string[] {
  assertSafeId('browserId', input.browserId);
  assertSafeId('hostId', input.hostId);
  for (const arg of input.launchArgs) checkLaunchArg(arg);

  const args: string[] = [];
  const add = (arg: string): void => {
    if (!args.includes(arg)) args.push(arg);
  };
  HOST_SWITCHES.forEach(add);
  input.launchArgs.forEach(add);
  add(`--user-data-dir=${input.userDataDir}`);
  // Port 0: Chrome picks a free port and writes it to DevToolsActivePort; it binds 127.0.0.1 only.
  add(`--remote-debugging-port=${input.debuggingPort ?? 0}`);
  if (input.processMarkers !== false) {
    add(`${HOST_ID_SWITCH}=${input.hostId}`);
    add(`${BROWSER_ID_SWITCH}=${input.browserId}`);
  }
  if (input.headless) add('--headless=new');
  // As root (CI) Chromium refuses to start with its sandbox; in a container the container is the sandbox.
  if (input.runningAsRoot || input.containerSandbox) add('--no-sandbox');
  args.push('about:blank');
  return args;
}

function checkLaunchArg(arg: string): void {
  if (typeof arg !== 'string' || !/^--[A-Za-z0-9]/.test(arg)) {
    throw new BrowserHostError('launch_arg_rejected', `Launch arg "${String(arg)}" is not a Chrome switch (--name or --name=value).`);
  }
  if (/[\n\r\0]/.test(arg)) {
    throw new BrowserHostError('launch_arg_rejected', `Launch arg "${switchName(arg)}" contains a line break or NUL.`);
  }
  if (ADAPTER_OWNED.has(switchName(arg))) {
    throw new BrowserHostError(
      'launch_arg_rejected',
      `Launch arg --${switchName(arg)} is set by the browser host itself and cannot be given in browser.launch_args.`,
      { switch: switchName(arg) },
    );
  }
}

/** Reads `--<name>=<value>` from a process's argv. */
export function switchValue(argv: readonly string[], name: string): string | undefined {
  const prefix = `${name}=`;
  const hit = argv.find((a) => a.startsWith(prefix));
  return hit === undefined ? undefined : hit.slice(prefix.length);
}
