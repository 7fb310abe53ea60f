import { ChromeArgInvalidError } from './host-config.errors';
import { HostConfig } from './host-config.model';

/**
 * The Host's own Chrome switches, first on every launch (shared browser of a
 * profile, profile-less stages, `sf browser login`). Not configurable.
 */
export const HOST_SWITCHES: readonly string[] = Object.freeze([
  // A permission prompt (location, camera, notifications, clipboard) is not drawn
  // on a Host with no screen nor in the live view, so the page would wait forever.
  // Denied at once instead.
  '--deny-permission-prompts',
  // On Linux, Chrome encrypts cookies with a key from the chosen password store.
  // A keyring would prompt (unseen) or hang on a Host with no session bus, and a
  // store that differs between launches makes saved cookies unreadable: the
  // profile looks logged out. agent-browser uses the same value.
  '--password-store=basic',
  // A logged-in profile must never sync its cookies or passwords to a Google account.
  '--disable-sync',
  // No field trials, safe-browsing list downloads or other traffic the stage did not ask for.
  '--disable-background-networking',
  // The component updater downloads and swaps browser components in the
  // background; a shared browser lives for a whole run, and it must behave the
  // same from its first stage to its last (browserless disables it for the same reason).
  '--disable-component-update',
  // No first-run welcome tab or default-browser prompt stealing the stage's tab.
  '--no-first-run',
]);

const DENY_PERMISSION_PROMPTS = '--deny-permission-prompts';

function assertSwitch(arg: string): void {
  if (arg === '' || !arg.startsWith('-')) throw new ChromeArgInvalidError(arg, 'must start with "-"');
  if (/[,\r\n]/.test(arg))
    throw new ChromeArgInvalidError(arg, 'contains a comma or newline, which agent-browser splits on');
}

/**
 * The Chrome switches for one launch: {@link HOST_SWITCHES}, then the
 * operator's `browser.launch_args`, then `extra` (switches the Host computes
 * for this launch, last so Chrome's "last value wins" keeps them). Exact
 * repeats are dropped; a repeated `--deny-permission-prompts` (with or
 * without a value) has no effect.
 *
 * @param extra - switches the Host computes for this launch (e.g. `--headless=new`); same rules as launch_args
 * @throws {@link ChromeArgInvalidError} when an `extra` switch is malformed (a Host bug)
 */
export function chromeArgs(config: HostConfig, extra: readonly string[] = []): string[] {
  extra.forEach(assertSwitch);
  const out: string[] = [];
  for (const arg of [...HOST_SWITCHES, ...config.browser.launchArgs, ...extra]) {
    const repeatsDeny =
      out.length > 0 && (arg === DENY_PERMISSION_PROMPTS || arg.startsWith(`${DENY_PERMISSION_PROMPTS}=`));
    if (repeatsDeny || out.includes(arg)) continue;
    out.push(arg);
  }
  return out;
}
