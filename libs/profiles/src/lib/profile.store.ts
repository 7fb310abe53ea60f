import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { nodeProfileFs, type ProfileFs, type ProfileFsEntry } from './profile-fs.adapter';
import { assertProfileName, assertScope, isProfileName } from './profile-name';
import {
  ProfileExistsError,
  ProfileFolderUnsafeError,
  ProfileHomeInCheckoutError,
  ProfileNameError,
  ProfileNotFoundError,
} from './profile.errors';
import type { ProfileInfo } from './profile.types';

export interface ProfileStoreOptions {
  /** The Stageflow home (`ApiConfig.home`, env `STAGEFLOW_HOME`); a relative path is taken from the working directory. */
  home: string;
  /** File access. @defaultValue the real file system */
  fs?: ProfileFs;
  /**
   * The user's home folder: the project-checkout check walks up from the
   * Stageflow home and stops here, so a dotfiles repository in `~` does not
   * make `~/.stageflow` unusable. @defaultValue `os.homedir()`
   */
  userHome?: string;
}

/** Owner-only, for every folder of the store: a profile holds logged-in cookies. */
const DIR_MODE = 0o700;
/**
 * A profile being deleted is first renamed to `.deleting-<name>-<random>`:
 * it vanishes from the store in one step, and a crash mid-delete leaves a
 * folder no name can reach (names cannot start with a dot) that the next
 * delete sweeps away.
 */
const TOMBSTONE_PREFIX = '.deleting-';

/**
 * The browser profile folders of one Host: `<home>/browser/<scope>/<name>/`,
 * every folder 0700. The only code that knows where a profile lives.
 *
 * Every name is checked ({@link assertProfileName}) before it touches a path,
 * and every existing profile is re-checked on use: it must be a real folder
 * (not a symbolic link) whose resolved path is its scope folder plus its
 * name, with the name spelled in the same case.
 */
export class ProfileStore {
  private readonly home: string;
  private readonly root: string;
  private readonly fs: ProfileFs;
  private readonly userHome: string;
  private outsideCheckout?: Promise<void>;

  constructor(options: ProfileStoreOptions) {
    this.home = resolve(options.home);
    this.root = join(this.home, 'browser');
    this.fs = options.fs ?? nodeProfileFs;
    this.userHome = resolve(options.userHome ?? homedir());
  }

  /**
   * Creates an empty profile folder (0700), and the `browser/` and `<scope>/`
   * folders above it when missing. Those two are set to 0700 even when they
   * existed with looser modes: a profile is only as private as its parents.
   *
   * @throws ProfileNameError (400) for a bad name
   * @throws ProfileExistsError (409) when it exists, also under another case (`Work` vs `work`)
   * @throws ProfileHomeInCheckoutError (500) when the Stageflow home is inside a project checkout
   */
  async create(scope: string, name: string): Promise<ProfileInfo> {
    const dir = this.dirOf(scope, name);
    await this.assertOutsideCheckout();
    const scopeDir = await this.prepareScope(scope);
    const clash = (await this.fs.list(scopeDir))?.find((e) => e.name.toLowerCase() === name.toLowerCase());
    if (clash && clash.kind !== 'dir') throw new ProfileFolderUnsafeError(clash.name);
    if (clash) throw new ProfileExistsError(name, clash.name);
    try {
      await this.fs.makeDir(dir, DIR_MODE);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new ProfileExistsError(name);
      throw e;
    }
    // mkdir's mode passes through the umask; set exactly what is meant.
    await this.fs.chmod(dir, DIR_MODE);
    return this.info(scope, name, await this.entry(dir, name));
  }

  /** The scope's profiles by name, without sizes. Entries that are not plain folders with a valid name are left out. */
  async list(scope: string): Promise<ProfileInfo[]> {
    assertScope(scope);
    const entries = (await this.fs.list(join(this.root, scope))) ?? [];
    const names = entries
      .filter((e) => e.kind === 'dir' && isProfileName(e.name))
      .map((e) => e.name)
      .sort();
    const found = await Promise.all(
      names.map(async (name) => {
        const entry = await this.fs.lstat(join(this.root, scope, name));
        return entry?.kind === 'dir' ? this.info(scope, name, entry) : undefined;
      }),
    );
    return found.filter((p): p is ProfileInfo => p !== undefined);
  }

  /**
   * One profile, with the bytes its files take.
   *
   * @throws ProfileNotFoundError (404), ProfileFolderUnsafeError (409), ProfileNameError (400)
   */
  async get(scope: string, name: string): Promise<ProfileInfo> {
    const { dir, entry } = await this.locate(scope, name);
    return { ...this.info(scope, name, entry), sizeBytes: await this.fs.sizeOf(dir) };
  }

  /**
   * Whether the profile exists (exact name and case).
   *
   * @throws ProfileFolderUnsafeError (409) when something unsafe is in its place
   */
  async exists(scope: string, name: string): Promise<boolean> {
    try {
      await this.locate(scope, name);
      return true;
    } catch (e) {
      if (e instanceof ProfileNotFoundError) return false;
      throw e;
    }
  }

  /**
   * Removes the profile folder and everything in it. The folder is renamed
   * away first, so no reader ever sees half a profile. Checking the lease is
   * the caller's job (`ProfileService.delete`).
   *
   * @throws ProfileNotFoundError (404), ProfileFolderUnsafeError (409): a link is never deleted through
   */
  async delete(scope: string, name: string): Promise<void> {
    const { dir } = await this.locate(scope, name);
    const scopeDir = dirname(dir);
    const tombstone = join(scopeDir, `${TOMBSTONE_PREFIX}${name}-${randomBytes(6).toString('hex')}`);
    try {
      await this.fs.rename(dir, tombstone);
    } catch (e) {
      // Another delete got there first.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ProfileNotFoundError(name);
      throw e;
    }
    await this.fs.removeTree(tombstone);
    await this.sweepTombstones(scopeDir);
  }

  /**
   * The profile's folder, for the browser host to start Chrome on, and for
   * nothing else: no API response, event, envelope, log line meant for
   * clients, or run state may hold it (they name the profile). Tightens the
   * folder and its parents to 0700 on the way, since Chrome is about to write
   * cookies there.
   *
   * @throws ProfileNotFoundError (404), ProfileFolderUnsafeError (409), ProfileHomeInCheckoutError (500)
   */
  async pathFor(scope: string, name: string): Promise<string> {
    this.dirOf(scope, name); // a bad name is refused before the disk is touched
    await this.assertOutsideCheckout();
    const { dir } = await this.locate(scope, name);
    for (const folder of [this.root, dirname(dir), dir]) await this.fs.chmod(folder, DIR_MODE);
    return dir;
  }

  /** `<root>/<scope>/<name>`, after checking both and that the result is exactly one level below the scope folder. */
  private dirOf(scope: string, name: string): string {
    assertScope(scope);
    assertProfileName(name);
    const scopeDir = join(this.root, scope);
    const dir = resolve(scopeDir, name);
    // Unreachable with the name rule as it is; kept so a looser rule can never walk out of the store.
    if (dirname(dir) !== scopeDir || basename(dir) !== name) throw new ProfileNameError(name);
    return dir;
  }

  private async locate(scope: string, name: string): Promise<{ dir: string; entry: ProfileFsEntry }> {
    const dir = this.dirOf(scope, name);
    const scopeDir = dirname(dir);
    // Exact case: on a case-insensitive disk `Work` would otherwise open `work`, under another lease.
    if (!(await this.fs.list(scopeDir))?.some((e) => e.name === name)) throw new ProfileNotFoundError(name);
    const entry = await this.entry(dir, name);
    const [real, realScope] = await Promise.all([this.fs.realpath(dir), this.fs.realpath(scopeDir)]);
    if (real !== join(realScope, name)) throw new ProfileFolderUnsafeError(name);
    return { dir, entry };
  }

  private async entry(dir: string, name: string): Promise<ProfileFsEntry> {
    const entry = await this.fs.lstat(dir);
    if (!entry) throw new ProfileNotFoundError(name);
    if (entry.kind !== 'dir') throw new ProfileFolderUnsafeError(name);
    return entry;
  }

  private info(scope: string, name: string, entry: ProfileFsEntry): ProfileInfo {
    const created = entry.birthtimeMs > 0 ? entry.birthtimeMs : entry.mtimeMs;
    return { name, scope, createdAt: new Date(created).toISOString() };
  }

  private async prepareScope(scope: string): Promise<string> {
    const scopeDir = join(this.root, scope);
    await this.fs.makeDirs(scopeDir, DIR_MODE);
    for (const folder of [this.root, scopeDir]) await this.fs.chmod(folder, DIR_MODE);
    return scopeDir;
  }

  /** Best effort: a tombstone that cannot go now goes with the next delete. */
  private async sweepTombstones(scopeDir: string): Promise<void> {
    const entries = (await this.fs.list(scopeDir).catch(() => undefined)) ?? [];
    for (const e of entries) {
      if (e.kind === 'dir' && e.name.startsWith(TOMBSTONE_PREFIX)) {
        await this.fs.removeTree(join(scopeDir, e.name)).catch(() => undefined);
      }
    }
  }

  /**
   * Refuses a Stageflow home inside a project checkout: a folder from the
   * home up to (not including) the user's home folder holds `.git`. Checked
   * once per store; a failed check is repeated next time.
   */
  private assertOutsideCheckout(): Promise<void> {
    this.outsideCheckout ??= (async () => {
      for (let dir = this.home; dir !== this.userHome; dir = dirname(dir)) {
        if (await this.fs.lstat(join(dir, '.git'))) throw new ProfileHomeInCheckoutError();
        if (dirname(dir) === dir) return;
      }
    })().catch((e: unknown) => {
      this.outsideCheckout = undefined;
      throw e;
    });
    return this.outsideCheckout;
  }
}
