import { Injectable } from '@nestjs/common';
import { accessSync, closeSync, constants, fstatSync, mkdirSync, openSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { ActivityFile } from './agent-browser-activity';

/**
 * The files of a stage's agent-browser wrapper, behind an adapter (STYLE rule 5).
 * Synchronous like {@link StageWorkspace}: a few small local-disk calls per
 * profile stage attempt.
 */
@Injectable()
export class ActivityFiles {
  /**
   * The first executable file `name` on `path`, as `/bin/sh` would find it for a
   * process starting in `cwd` (an empty entry is the current folder; relative
   * entries are taken from `cwd`); undefined when there is none.
   */
  findExecutable(name: string, path: string, cwd: string): string | undefined {
    for (const entry of path.split(':')) {
      const candidate = join(entry === '' ? cwd : isAbsolute(entry) ? entry : resolve(cwd, entry), name);
      try {
        if (!statSync(candidate).isFile()) continue;
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not there, or not executable by this user: the shell would skip it too.
      }
    }
    return undefined;
  }

  /**
   * A fresh `dir` (0700; a leftover of a re-run attempt is removed) holding the
   * executable `bin/<name>` (0700) with `script`, and `activityFile` (0600)
   * holding `header` and a newline.
   *
   * @returns the `bin` folder, to put first on the stage's PATH
   */
  prepare(dir: string, name: string, script: string, activityFile: string, header: string): string {
    rmSync(dir, { recursive: true, force: true });
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true, mode: 0o700 });
    writeFileSync(activityFile, `${header}\n`, { mode: 0o600, flag: 'wx' });
    writeFileSync(join(bin, name), script, { mode: 0o700, flag: 'wx' });
    return bin;
  }

  /** At most `maxBytes` of the activity file. */
  read(file: string, maxBytes: number): ActivityFile {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return { state: 'unreadable' };
    }
    try {
      const stat = fstatSync(fd);
      // A folder where the file was is no activity file.
      if (!stat.isFile()) return { state: 'unreadable' };
      const size = stat.size;
      const want = Math.min(size, maxBytes);
      const buffer = Buffer.alloc(want);
      let length = 0;
      while (length < want) {
        const n = readSync(fd, buffer, length, want - length, length);
        if (n === 0) break;
        length += n;
      }
      return { state: 'read', text: buffer.subarray(0, length).toString('utf8'), truncated: size > maxBytes };
    } catch {
      return { state: 'unreadable' };
    } finally {
      closeSync(fd);
    }
  }

  remove(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
  }
}
