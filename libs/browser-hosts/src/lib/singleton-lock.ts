import { readlink, rm, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BrowserHostError } from './browser-host.error';

/** Who holds a profile, from the `SingletonLock` symlink target `<hostname>-<pid>`. */
export interface SingletonLockOwner {
  hostname: string;
  pid: number;
}

const SINGLETON_FILES = ['SingletonLock', 'SingletonSocket', 'SingletonCookie'] as const;
/** The temp folder Chrome keeps its singleton socket in; removed with a stale lock. */
const SOCKET_DIR = /^(org\.chromium\.Chromium|com\.google\.Chrome(\.\w+)?)\.[A-Za-z0-9]{6}$/;

/** Parses `<hostname>-<pid>`; host names may contain dashes, the pid is after the last one. */
export function parseSingletonLockTarget(target: string): SingletonLockOwner | undefined {
  const dash = target.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const pidText = target.slice(dash + 1);
  const pid = Number(pidText);
  if (!/^\d+$/.test(pidText) || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { hostname: target.slice(0, dash), pid };
}

export type SingletonLockVerdict =
  | { action: 'none' }
  | { action: 'remove'; owner: SingletonLockOwner; reason: 'owner_dead' | 'other_host' }
  | { action: 'in_use'; owner?: SingletonLockOwner };

/**
 * The rule: a lock is stale, and may go, only when its owner pid is not alive on this
 * host, or it was written on another host (a container with a new hostname, after which
 * Chrome itself refuses the profile with exit 21). A lock we cannot read is not ours to
 * remove.
 */
export function judgeSingletonLock(
  target: string | undefined,
  here: { hostname: string; isPidAlive: (pid: number) => boolean },
): SingletonLockVerdict {
  if (target === undefined) return { action: 'none' };
  const owner = parseSingletonLockTarget(target);
  if (!owner) return { action: 'in_use' };
  if (owner.hostname !== here.hostname) return { action: 'remove', owner, reason: 'other_host' };
  return here.isPidAlive(owner.pid) ? { action: 'in_use', owner } : { action: 'remove', owner, reason: 'owner_dead' };
}

/**
 * Applies {@link judgeSingletonLock} to a profile folder: removes `SingletonLock`,
 * `SingletonSocket`, `SingletonCookie` (and the socket's temp folder) when the lock is
 * stale. Returns the stale owner it removed, or `undefined` when there was no lock.
 *
 * @throws BrowserHostError `profile_in_use` when the owner is alive (or the lock is unreadable).
 */
export async function clearStaleSingletonLock(
  userDataDir: string,
  here: { hostname: string; isPidAlive: (pid: number) => boolean },
): Promise<(SingletonLockOwner & { reason: 'owner_dead' | 'other_host' }) | undefined> {
  const target = await readlink(join(userDataDir, 'SingletonLock')).catch((error: NodeJS.ErrnoException) => {
    // ENOENT: no lock. EINVAL: a plain file (not Chrome's), left for Chrome to judge.
    if (error.code === 'ENOENT' || error.code === 'EINVAL') return undefined;
    throw error;
  });
  const verdict = judgeSingletonLock(target, here);
  if (verdict.action === 'none') return undefined;
  if (verdict.action === 'in_use') {
    throw new BrowserHostError(
      'profile_in_use',
      verdict.owner
        ? `The browser profile is in use by a live browser (pid ${verdict.owner.pid} on this host). Close that browser first.`
        : 'The browser profile has a lock file we cannot read. If no browser uses the profile, delete its SingletonLock.',
      verdict.owner ? { pid: verdict.owner.pid } : undefined,
    );
  }
  const socketTarget = await readlink(join(userDataDir, 'SingletonSocket')).catch(() => undefined);
  for (const name of SINGLETON_FILES) {
    await unlink(join(userDataDir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  if (socketTarget && basename(socketTarget) === 'SingletonSocket' && SOCKET_DIR.test(basename(dirname(socketTarget)))) {
    await rm(dirname(socketTarget), { recursive: true, force: true });
  }
  return { ...verdict.owner, reason: verdict.reason };
}
