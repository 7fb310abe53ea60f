import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clearStaleSingletonLock, judgeSingletonLock, parseSingletonLockTarget } from './singleton-lock';

const here = (alive: number[]) => ({ hostname: 'my-box', isPidAlive: (pid: number) => alive.includes(pid) });

describe('SingletonLock rule', () => {
  it('parses <hostname>-<pid>, host names with dashes included', () => {
    expect(parseSingletonLockTarget('my-box-4242')).toEqual({ hostname: 'my-box', pid: 4242 });
    expect(parseSingletonLockTarget('vm-1')).toEqual({ hostname: 'vm', pid: 1 });
    expect(parseSingletonLockTarget('nopid')).toBeUndefined();
    expect(parseSingletonLockTarget('host-12x')).toBeUndefined();
  });

  it('removes a lock whose owner is dead on this host, or that was written on another host', () => {
    expect(judgeSingletonLock('my-box-10', here([]))).toMatchObject({ action: 'remove', reason: 'owner_dead' });
    expect(judgeSingletonLock('container-7f3a-10', here([10]))).toMatchObject({ action: 'remove', reason: 'other_host' });
  });

  it('never removes a lock whose owner is alive on this host, nor one it cannot read', () => {
    expect(judgeSingletonLock('my-box-10', here([10]))).toEqual({ action: 'in_use', owner: { hostname: 'my-box', pid: 10 } });
    expect(judgeSingletonLock('garbage', here([]))).toEqual({ action: 'in_use' });
    expect(judgeSingletonLock(undefined, here([]))).toEqual({ action: 'none' });
  });
});

describe('clearStaleSingletonLock on a profile folder', () => {
  let root: string;
  let profile: string;
  let socketDir: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'sf-lock-unit-'));
    profile = join(root, 'profile');
    socketDir = join(root, 'org.chromium.Chromium.AbC123');
    await mkdir(profile);
    await mkdir(socketDir);
    await writeFile(join(socketDir, 'SingletonSocket'), '');
    await symlink(join(socketDir, 'SingletonSocket'), join(profile, 'SingletonSocket'));
    await symlink('1234567890', join(profile, 'SingletonCookie'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });
  const exists = (p: string) => lstat(p).then(() => true, () => false);

  it('removes the three Singleton files and the socket folder of a dead owner', async () => {
    await symlink('my-box-999', join(profile, 'SingletonLock'));
    await expect(clearStaleSingletonLock(profile, here([]))).resolves.toEqual({
      hostname: 'my-box',
      pid: 999,
      reason: 'owner_dead',
    });
    for (const name of ['SingletonLock', 'SingletonSocket', 'SingletonCookie']) {
      expect(await exists(join(profile, name))).toBe(false);
    }
    expect(await exists(socketDir)).toBe(false);
  });

  it('fails with profile_in_use and touches nothing when the owner is alive', async () => {
    await symlink('my-box-999', join(profile, 'SingletonLock'));
    const error = await clearStaleSingletonLock(profile, here([999])).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'profile_in_use', status: 409, details: { pid: 999 } });
    expect((error as Error).message).not.toContain(profile);
    expect(await exists(join(profile, 'SingletonLock'))).toBe(true);
    expect(await exists(socketDir)).toBe(true);
  });

  it('does nothing without a lock', async () => {
    await expect(clearStaleSingletonLock(profile, here([]))).resolves.toBeUndefined();
    expect(await exists(join(profile, 'SingletonSocket'))).toBe(true);
  });
});
