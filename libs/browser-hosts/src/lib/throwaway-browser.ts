import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BrowserHostError } from './browser-host.error';
import type { BrowserExit, LaunchedBrowser, LaunchOptions, ThrowawayCapableAdapter } from './browser-host.port';
import { AllowlistEnforcer, type AllowlistBlock } from './allowlist-enforcer';
import { assertSafeId } from './chrome-switches';

export interface ThrowawayLaunchOptions extends Omit<LaunchOptions, 'userDataDir'> {
  /**
   * `allow_domains` of the stage. When given, an {@link AllowlistEnforcer} is in place
   * before the browser is returned, and the browser is killed if it is ever lost.
   */
  allowDomains?: readonly string[];
  /** Once per refused host. */
  onBlocked?: (block: AllowlistBlock) => void;
}

/** A throw-away browser: its profile folder is deleted once the browser has exited. */
export interface ThrowawayBrowser extends LaunchedBrowser {
  /** The enforcer, when `allowDomains` was given. */
  readonly allowlist?: AllowlistEnforcer;
}

/**
 * Launches a browser on a fresh temporary profile (0700, under the adapter's
 * `throwawayRoot`) that takes no lease and shares no login. The folder is deleted
 * when the browser exits, however it exits; `close()` and `kill()` resolve after that.
 */
export async function launchThrowaway(
  adapter: ThrowawayCapableAdapter,
  opts: ThrowawayLaunchOptions,
): Promise<ThrowawayBrowser> {
  assertSafeId('browserId', opts.browserId);
  await mkdir(adapter.throwawayRoot, { recursive: true, mode: 0o700 });
  await chmod(adapter.throwawayRoot, 0o700);
  // `<browserId>.<random>`: the sweep reads the id back from the name.
  const userDataDir = await mkdtemp(join(adapter.throwawayRoot, `${opts.browserId}.`));
  const removeProfile = (): Promise<void> =>
    rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });

  let browser: LaunchedBrowser;
  try {
    browser = await adapter.launch({
      browserId: opts.browserId,
      userDataDir,
      headed: opts.headed,
      launchArgs: opts.launchArgs,
      executablePath: opts.executablePath,
    });
  } catch (error) {
    await removeProfile();
    throw error;
  }
  const exited: Promise<BrowserExit> = browser.exited.then(async (exit) => {
    await removeProfile();
    return exit;
  });

  let allowlist: AllowlistEnforcer | undefined;
  let ending = false;
  if (opts.allowDomains) {
    try {
      allowlist = await AllowlistEnforcer.start(browser.wsEndpoint, {
        allowDomains: opts.allowDomains,
        onBlocked: opts.onBlocked,
        // Fail closed: a browser whose allowlist is gone must not keep running. Not while
        // we are closing it: the connection drops as Chrome quits, and a SIGKILL then
        // would cut its shutdown short (cookies unwritten, lock left behind).
        onLost: () => {
          if (!ending) void browser.kill();
        },
      });
    } catch (error) {
      await browser.kill();
      await exited;
      if (error instanceof BrowserHostError) throw error;
      throw new BrowserHostError(
        'allowlist_unenforced',
        `The allowlist could not be put in place, so the browser was closed (${(error as Error).message}).`,
        { browserId: opts.browserId },
      );
    }
  }

  const throwaway: ThrowawayBrowser & { toJSON(): object } = {
    browserId: browser.browserId,
    cdpPort: browser.cdpPort,
    wsEndpoint: browser.wsEndpoint,
    pid: browser.pid,
    headedMode: browser.headedMode,
    allowlist,
    exited,
    async close() {
      // Close the browser first: stopping the enforcer first would leave a moment unenforced.
      ending = true;
      await browser.close();
      await allowlist?.stop();
      await exited;
    },
    async kill() {
      ending = true;
      await browser.kill();
      await allowlist?.stop();
      await exited;
    },
    // Serializes without the enforcer (a live connection) or anything profile-related.
    toJSON() {
      const { browserId, pid, cdpPort, wsEndpoint, headedMode } = browser;
      return { browserId, pid, cdpPort, wsEndpoint, headedMode };
    },
  };
  return throwaway;
}
