import fc from 'fast-check';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import {
  isProfileName,
  ProfileExistsError,
  ProfileFolderUnsafeError,
  ProfileHomeInCheckoutError,
  ProfileNameError,
  ProfileNotFoundError,
  ProfileScopeError,
  ProfileStore,
} from '../index';
import { recordingFs } from '../test/profile-fakes';
import { BAD_NAMES } from '../test/profile-names';

const modeOf = (path: string): number => statSync(path).mode & 0o777;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('ProfileStore', () => {
  let base: string;
  let home: string;
  let scopeDir: string;
  let store: ProfileStore;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'sf-profiles-'));
    home = join(base, 'home');
    scopeDir = join(home, 'browser', 'local');
    // userHome = base: the checkout check looks at the temp folders only.
    store = new ProfileStore({ home, userHome: base });
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  describe('create', () => {
    it('creates <home>/browser/<scope>/<name>/ with owner-only folders and returns no path', async () => {
      const before = Date.now();
      const info = await store.create('local', 'work');
      expect(info).toEqual({ name: 'work', scope: 'local', createdAt: expect.any(String) });
      expect(Date.parse(info.createdAt)).toBeGreaterThanOrEqual(before - 2000);
      expect(JSON.stringify(info)).not.toContain(base);
      for (const dir of [join(home, 'browser'), scopeDir, join(scopeDir, 'work')]) expect(modeOf(dir)).toBe(0o700);
      expect(readdirSync(join(scopeDir, 'work'))).toEqual([]);
    });

    it('tightens browser/ and <scope>/ that existed with looser modes', async () => {
      mkdirSync(scopeDir, { recursive: true });
      chmodSync(join(home, 'browser'), 0o755);
      chmodSync(scopeDir, 0o777);
      await store.create('local', 'work');
      expect(modeOf(join(home, 'browser'))).toBe(0o700);
      expect(modeOf(scopeDir)).toBe(0o700);
    });

    it('makes the profile 0700 whatever the umask', async () => {
      const old = process.umask(0o000);
      try {
        await store.create('local', 'open');
      } finally {
        process.umask(old);
      }
      expect(modeOf(join(scopeDir, 'open'))).toBe(0o700);
    });

    it('refuses an existing name with 409 profile_exists, also in another case', async () => {
      await store.create('local', 'work');
      expect(await rejection(store.create('local', 'work'))).toMatchObject({ code: 'profile_exists', status: 409 });
      const other = await rejection(store.create('local', 'WORK'));
      expect(other).toBeInstanceOf(ProfileExistsError);
      expect((other as Error).message).toMatch(/"work" already exists.*differ only in case/);
      expect(readdirSync(scopeDir)).toEqual(['work']);
    });

    it('keeps scopes apart', async () => {
      await store.create('local', 'work');
      await store.create('team-a', 'work');
      expect(existsSync(join(home, 'browser', 'team-a', 'work'))).toBe(true);
      expect((await store.list('team-a')).map((p) => p.name)).toEqual(['work']);
    });

    it('refuses a bad scope as a Host bug (500)', async () => {
      for (const scope of ['', '..', 'a/b', '.x']) {
        expect(await rejection(store.create(scope, 'work'))).toBeInstanceOf(ProfileScopeError);
      }
      expect(existsSync(home)).toBe(false);
    });
  });

  describe('names never become paths outside the scope folder', () => {
    it.each(BAD_NAMES.map((n) => [JSON.stringify(n) ?? String(n), n]))(
      '%s is refused by every call before the disk is touched',
      async (_label, name) => {
        const { fs, paths } = recordingFs();
        const s = new ProfileStore({ home, fs, userHome: base });
        const n = name as string;
        for (const call of [() => s.create('local', n), () => s.get('local', n), () => s.delete('local', n), () => s.pathFor('local', n), () => s.exists('local', n)]) {
          expect(await rejection(call())).toBeInstanceOf(ProfileNameError);
        }
        expect(paths).toEqual([]);
      },
    );

    it('any string: refused, or every path touched stays in the store (bar the .git lookups above the home)', async () => {
      const { fs, paths } = recordingFs();
      const s = new ProfileStore({ home, fs, userHome: base });
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.string({ maxLength: 70 }), fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,66}$/)), async (name) => {
          paths.length = 0;
          const created = await s.create('local', name).catch((e: unknown) => e);
          if (!isProfileName(name)) {
            expect(created).toBeInstanceOf(ProfileNameError);
            expect(paths).toEqual([]);
            return;
          }
          await s.delete('local', name).catch(() => undefined);
          for (const p of paths) {
            const inStore = p === join(home, 'browser') || p === scopeDir || p.startsWith(scopeDir + sep);
            expect(inStore || p.endsWith(`${sep}.git`)).toBe(true);
            if (p.startsWith(scopeDir + sep)) expect(p.slice(scopeDir.length + 1)).not.toContain(sep);
          }
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('list, get, exists', () => {
    it('lists plain folders with valid names, sorted; leaves out files, links, dot folders and leftovers', async () => {
      expect(await store.list('local')).toEqual([]);
      await store.create('local', 'zeta');
      await store.create('local', 'alpha');
      writeFileSync(join(scopeDir, 'notes'), 'x');
      mkdirSync(join(scopeDir, '.deleting-old-123'));
      mkdirSync(join(scopeDir, 'bad name'));
      mkdirSync(join(base, 'elsewhere'));
      symlinkSync(join(base, 'elsewhere'), join(scopeDir, 'linked'));
      expect((await store.list('local')).map((p) => p.name)).toEqual(['alpha', 'zeta']);
      expect((await store.list('local'))[0]).toEqual({ name: 'alpha', scope: 'local', createdAt: expect.any(String) });
    });

    it('gets one profile with the bytes of its files, links not followed', async () => {
      await store.create('local', 'work');
      const dir = join(scopeDir, 'work');
      mkdirSync(join(dir, 'Default', 'Cache'), { recursive: true });
      writeFileSync(join(dir, 'Local State'), 'x'.repeat(100));
      writeFileSync(join(dir, 'Default', 'Cookies'), 'x'.repeat(1000));
      writeFileSync(join(dir, 'Default', 'Cache', 'data_0'), 'x'.repeat(24));
      writeFileSync(join(base, 'big'), 'x'.repeat(100_000));
      symlinkSync(join(base, 'big'), join(dir, 'SingletonLock'));
      expect(await store.get('local', 'work')).toEqual({
        name: 'work',
        scope: 'local',
        createdAt: expect.any(String),
        sizeBytes: 1124,
      });
    });

    it('answers 404 profile_not_found for a missing profile and for a name in another case', async () => {
      expect(await rejection(store.get('local', 'work'))).toMatchObject({ code: 'profile_not_found', status: 404 });
      await store.create('local', 'work');
      expect(await rejection(store.get('local', 'Work'))).toBeInstanceOf(ProfileNotFoundError);
      expect(await store.exists('local', 'work')).toBe(true);
      expect(await store.exists('local', 'Work')).toBe(false);
      expect(await store.exists('local', 'other')).toBe(false);
    });
  });

  describe('folders that are not plain folders', () => {
    beforeEach(async () => {
      await store.create('local', 'real');
      mkdirSync(join(base, 'outside'));
      writeFileSync(join(base, 'outside', 'keep'), 'precious');
      symlinkSync(join(base, 'outside'), join(scopeDir, 'linked'));
      writeFileSync(join(scopeDir, 'afile'), 'x');
    });

    it('refuses a profile folder that is a symbolic link or a file: 409 profile_folder_unsafe, nothing followed or deleted', async () => {
      for (const name of ['linked', 'afile']) {
        for (const call of [() => store.get('local', name), () => store.delete('local', name), () => store.pathFor('local', name), () => store.exists('local', name)]) {
          const err = await rejection(call());
          expect(err).toBeInstanceOf(ProfileFolderUnsafeError);
          expect((err as Error).message).not.toContain(base);
        }
      }
      expect(readdirSync(join(base, 'outside'))).toEqual(['keep']);
      expect(existsSync(join(scopeDir, 'linked'))).toBe(true);
      expect(await rejection(store.create('local', 'linked'))).toBeInstanceOf(ProfileFolderUnsafeError);
    });

    it('still serves the real profiles around them', async () => {
      expect((await store.list('local')).map((p) => p.name)).toEqual(['real']);
      expect(await store.pathFor('local', 'real')).toBe(join(scopeDir, 'real'));
    });
  });

  describe('delete', () => {
    it('removes the folder and everything in it, leaving nothing behind', async () => {
      await store.create('local', 'work');
      mkdirSync(join(scopeDir, 'work', 'Default'));
      writeFileSync(join(scopeDir, 'work', 'Default', 'Cookies'), 'secret');
      await store.delete('local', 'work');
      expect(readdirSync(scopeDir)).toEqual([]);
      expect(await rejection(store.delete('local', 'work'))).toBeInstanceOf(ProfileNotFoundError);
    });

    it('sweeps folders a crashed delete left behind, and nothing else', async () => {
      await store.create('local', 'work');
      await store.create('local', 'keep');
      mkdirSync(join(scopeDir, '.deleting-old-00aa11bb22cc', 'Default'), { recursive: true });
      await store.delete('local', 'work');
      expect(readdirSync(scopeDir)).toEqual(['keep']);
    });

    it('lets exactly one of two concurrent deletes succeed', async () => {
      await store.create('local', 'work');
      const results = await Promise.allSettled([store.delete('local', 'work'), store.delete('local', 'work')]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: expect.any(ProfileNotFoundError) });
    });
  });

  describe('pathFor (browser host only)', () => {
    it('returns the folder and tightens it and its parents to 0700', async () => {
      await store.create('local', 'work');
      chmodSync(join(scopeDir, 'work'), 0o755);
      chmodSync(join(home, 'browser'), 0o711);
      expect(await store.pathFor('local', 'work')).toBe(join(scopeDir, 'work'));
      expect(modeOf(join(scopeDir, 'work'))).toBe(0o700);
      expect(modeOf(join(home, 'browser'))).toBe(0o700);
    });

    it('answers 404 for a profile that does not exist (it never creates one)', async () => {
      expect(await rejection(store.pathFor('local', 'work'))).toBeInstanceOf(ProfileNotFoundError);
      expect(existsSync(join(scopeDir, 'work'))).toBe(false);
    });
  });

  describe('never inside a project checkout', () => {
    it('refuses a home below a folder holding .git, before creating anything', async () => {
      const repo = join(base, 'repo');
      mkdirSync(join(repo, '.git'), { recursive: true });
      const inRepo = new ProfileStore({ home: join(repo, 'tools', '.stageflow'), userHome: base });
      const err = await rejection(inRepo.create('local', 'work'));
      expect(err).toBeInstanceOf(ProfileHomeInCheckoutError);
      expect(err).toMatchObject({ code: 'profile_home_in_checkout', status: 500 });
      expect((err as Error).message).not.toContain(base);
      expect(existsSync(join(repo, 'tools'))).toBe(false);
    });

    it('also for a worktree (.git is a file) and for pathFor', async () => {
      const repo = join(base, 'wt');
      mkdirSync(join(repo, 'h', 'browser', 'local', 'work'), { recursive: true });
      writeFileSync(join(repo, '.git'), 'gitdir: /elsewhere');
      const inRepo = new ProfileStore({ home: join(repo, 'h'), userHome: base });
      expect(await rejection(inRepo.pathFor('local', 'work'))).toBeInstanceOf(ProfileHomeInCheckoutError);
    });

    it('stops at the user home folder: a dotfiles repository in ~ does not block ~/.stageflow', async () => {
      const userHome = join(base, 'user');
      mkdirSync(join(userHome, '.git'), { recursive: true });
      const s = new ProfileStore({ home: join(userHome, '.stageflow'), userHome });
      await expect(s.create('local', 'work')).resolves.toMatchObject({ name: 'work' });
    });
  });
});
