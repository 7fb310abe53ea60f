import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CdpError } from './cdp.error';
import { parseDevToolsActivePort, type DevToolsActivePort } from './cdp-endpoint';

/** File name Chrome writes into the user data dir when started with `--remote-debugging-port`. */
export const DEVTOOLS_ACTIVE_PORT_FILE = 'DevToolsActivePort';

export interface ReadDevToolsActivePortOptions {
  /**
   * How long to wait for Chrome to write the file.
   * @defaultValue 20000
   */
  timeoutMs?: number;
  /**
   * How often to look.
   * @defaultValue 50
   */
  pollMs?: number;
  /** Stops waiting early, e.g. when the browser process exited; rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Waits (bounded) for `<userDataDir>/DevToolsActivePort` and returns the port and
 * browser endpoint in it. Delete a stale file with {@link removeDevToolsActivePort}
 * before launching: Chrome leaves the old one behind after it exits.
 *
 * @throws CdpError `cdp_timeout` when no complete file appeared in time;
 *   `cdp_bad_port_file` when a file exists but never became valid.
 */
export async function readDevToolsActivePort(
  userDataDir: string,
  options: ReadDevToolsActivePortOptions = {},
): Promise<DevToolsActivePort> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const pollMs = options.pollMs ?? 50;
  const file = join(userDataDir, DEVTOOLS_ACTIVE_PORT_FILE);
  const deadline = Date.now() + timeoutMs;
  let sawFile = false;
  for (;;) {
    throwIfAborted(options.signal);
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text !== undefined) {
      sawFile = true;
      const parsed = parseDevToolsActivePort(text);
      if (parsed) return parsed;
    }
    if (Date.now() >= deadline) {
      // Never name the file's folder: it is a profile path.
      throw sawFile
        ? new CdpError('cdp_bad_port_file', `DevToolsActivePort never held a port and a browser path (waited ${timeoutMs} ms).`)
        : new CdpError('cdp_timeout', `The browser did not write DevToolsActivePort within ${timeoutMs} ms.`, {
            timeoutMs,
          });
    }
    await sleep(pollMs, options.signal);
  }
}

/** Deletes a stale `DevToolsActivePort` so the next read sees the new browser's port, not the last one's. */
export async function removeDevToolsActivePort(userDataDir: string): Promise<void> {
  await rm(join(userDataDir, DEVTOOLS_ACTIVE_PORT_FILE), { force: true });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  throw signal.reason instanceof Error
    ? signal.reason
    : new CdpError('cdp_unreachable', 'Stopped waiting for DevToolsActivePort.');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
