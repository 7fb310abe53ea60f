import { spawn, type ChildProcess } from 'node:child_process';
import { access, rm } from 'node:fs/promises';
import { BrowserHostError } from './browser-host.error';
import { signalGroup } from './process-table';

/** Environment markers on a private Xvfb, so a restarted host can find its orphans in /proc/<pid>/environ (Xvfb takes no unknown args). */
export const DISPLAY_HOST_ENV = 'STAGEFLOW_HOST';
export const DISPLAY_BROWSER_ENV = 'STAGEFLOW_BROWSER_ID';

/** Display numbers tried; high enough to stay clear of desktop sessions (:0, :1) and of CI's usual :99. */
const FIRST_DISPLAY = 100;
const LAST_DISPLAY = 999;

export function displaySocketPath(n: number): string {
  return `/tmp/.X11-unix/X${n}`;
}
export function displayLockPath(n: number): string {
  return `/tmp/.X${n}-lock`;
}

/** First display number from `start` with neither a lock file nor a socket. */
export async function findFreeDisplay(start = FIRST_DISPLAY, exists = pathExists): Promise<number> {
  for (let n = start; n <= LAST_DISPLAY; n++) {
    if (!(await exists(displayLockPath(n))) && !(await exists(displaySocketPath(n)))) return n;
  }
  throw new BrowserHostError('browser_launch_failed', `No free X display number between :${start} and :${LAST_DISPLAY}.`);
}

export interface VirtualDisplayOptions {
  xvfbPath: string;
  hostId: string;
  browserId: string;
  /** PATH for Xvfb's helpers (xkbcomp). */
  searchPath: string;
  /** @defaultValue 10000 */
  timeoutMs?: number;
}

/**
 * A private Xvfb owned by one browser: `Xvfb :N -screen 0 1280x800x24 -nolisten tcp`.
 * Started before the browser, stopped after it exits.
 */
export class VirtualDisplay {
  private stopping?: Promise<void>;

  private constructor(
    /** e.g. `:100`, the browser's `DISPLAY`. */
    readonly display: string,
    readonly number: number,
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /**
   * Picks a free display number and waits (bounded) until the X socket exists. Two
   * hosts can pick the same number at once; the loser's Xvfb exits and we try the next.
   */
  static async start(options: VirtualDisplayOptions): Promise<VirtualDisplay> {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    let next = FIRST_DISPLAY;
    let lastError = '';
    for (let attempt = 0; attempt < 5; attempt++) {
      const n = await findFreeDisplay(next);
      next = n + 1;
      const child = spawn(options.xvfbPath, [`:${n}`, '-screen', '0', '1280x800x24', '-nolisten', 'tcp'], {
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: options.searchPath, [DISPLAY_HOST_ENV]: options.hostId, [DISPLAY_BROWSER_ENV]: options.browserId },
      });
      let stderr = '';
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
      const exited = new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.once('error', (error) => {
          stderr += error.message;
          resolve();
        });
      });
      let gone = false;
      void exited.then(() => (gone = true));
      while (!gone && Date.now() < deadline) {
        if (await pathExists(displaySocketPath(n))) return new VirtualDisplay(`:${n}`, n, child, exited);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!gone) {
        signalGroup(child.pid ?? -1, 'SIGKILL');
        await exited;
        throw new BrowserHostError('browser_launch_failed', `Xvfb :${n} did not open its socket in time.`);
      }
      lastError = stderr.trim().split('\n').slice(-3).join(' | ');
    }
    throw new BrowserHostError('browser_launch_failed', `Xvfb did not start: ${lastError || 'it exited at once'}.`);
  }

  /** SIGTERM (Xvfb removes its lock and socket); after 3 s SIGKILL and remove them ourselves. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      signalGroup(this.pid, 'SIGTERM');
      const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 3000).unref());
      if ((await Promise.race([this.exited.then(() => 'ok' as const), timer])) === 'late') {
        signalGroup(this.pid, 'SIGKILL');
        await this.exited;
        // Only now: after a clean SIGTERM exit the number may already belong to someone else.
        await removeDisplayFiles(this.number);
      }
    })();
    return this.stopping;
  }
}

/** Removes a dead display's lock file and socket (Xvfb leaves them behind when killed). */
export async function removeDisplayFiles(n: number): Promise<void> {
  await rm(displayLockPath(n), { force: true });
  await rm(displaySocketPath(n), { force: true });
}

async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
