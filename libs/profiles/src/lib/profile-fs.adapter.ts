import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, readdir, realpath, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** What `lstat` saw (links are reported as links, never followed). */
export interface ProfileFsEntry {
  kind: 'dir' | 'file' | 'symlink' | 'other';
  /** Permission bits. */
  mode: number;
  /** Birth time in ms, 0 where the file system keeps none. */
  birthtimeMs: number;
  mtimeMs: number;
}

/** The file operations of the profile store, so tests can swap or break them. */
export interface ProfileFs {
  /** `mkdir -p` with `mode` for the folders it creates. */
  makeDirs(dir: string, mode: number): Promise<void>;
  /** `mkdir` of one folder; rejects with `EEXIST` when something is there already. */
  makeDir(dir: string, mode: number): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  /** `undefined` when nothing is there. */
  lstat(path: string): Promise<ProfileFsEntry | undefined>;
  /** Names in a folder with their kind; `undefined` when the folder does not exist. */
  list(dir: string): Promise<{ name: string; kind: ProfileFsEntry['kind'] }[] | undefined>;
  realpath(path: string): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  /** `rm -rf`: links inside are removed, not followed. */
  removeTree(path: string): Promise<void>;
  /** Bytes of the regular files under `dir`, links not followed. */
  sizeOf(dir: string): Promise<number>;
}

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

function kindOf(s: { isDirectory(): boolean; isFile(): boolean; isSymbolicLink(): boolean }): ProfileFsEntry['kind'] {
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isDirectory()) return 'dir';
  return s.isFile() ? 'file' : 'other';
}

function entryOf(s: Stats): ProfileFsEntry {
  return { kind: kindOf(s), mode: s.mode & 0o7777, birthtimeMs: s.birthtimeMs, mtimeMs: s.mtimeMs };
}

/** {@link ProfileFs} on the real file system. */
export const nodeProfileFs: ProfileFs = {
  async makeDirs(dir, mode) {
    await mkdir(dir, { recursive: true, mode });
  },
  async makeDir(dir, mode) {
    await mkdir(dir, { mode });
  },
  async chmod(path, mode) {
    await chmod(path, mode);
  },
  async lstat(path) {
    try {
      return entryOf(await lstat(path));
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  },
  async list(dir) {
    try {
      return (await readdir(dir, { withFileTypes: true })).map((d) => ({ name: d.name, kind: kindOf(d) }));
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  },
  realpath: (path) => realpath(path),
  rename: (from, to) => rename(from, to),
  async removeTree(path) {
    await rm(path, { recursive: true, force: true });
  },
  async sizeOf(dir) {
    // Iterative, so a deep Chrome cache cannot overflow the stack; files vanishing mid-walk (Chrome at work) are skipped.
    let total = 0;
    const pending = [dir];
    while (pending.length > 0) {
      const current = pending.pop() as string;
      let entries;
      try {
        entries = await readdir(current, { withFileTypes: true });
      } catch (e) {
        if (isMissing(e)) continue;
        throw e;
      }
      for (const entry of entries) {
        const path = join(current, entry.name);
        if (entry.isDirectory()) pending.push(path);
        else if (entry.isFile()) {
          try {
            total += (await lstat(path)).size;
          } catch (e) {
            if (!isMissing(e)) throw e;
          }
        }
      }
    }
    return total;
  },
};
