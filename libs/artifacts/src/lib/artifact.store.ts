import { randomBytes } from 'node:crypto';
import { constants, lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { lstat, open, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { artifactNameProblem, type ArtifactOwner } from '@stageflow/contracts';
import {
  ArtifactFolderUnsafeError,
  ArtifactNameError,
  ArtifactNotFoundError,
  ArtifactOwnerError,
  ArtifactTooLargeError,
} from './artifact.errors';
import { contentTypeOf } from './content-type';

export interface ArtifactStoreOptions {
  /** Root folder of every run's artifacts; a relative path is taken from the working directory. */
  root: string;
  /**
   * Largest artifact, in bytes: a bigger write is refused and a bigger file a
   * `run` stage left is removed by `collect`. Only writers (runners) need it.
   * @defaultValue 64 MiB
   */
  maxBytes?: number;
}

/** One artifact as clients may see it: names and numbers, never a path. */
export interface ArtifactInfo {
  runId: string;
  stageId: string;
  attempt: number;
  name: string;
  sizeBytes: number;
  /** From the name's extension; `application/octet-stream` when unknown. */
  contentType: string;
  /** When the file was last written (ISO 8601). */
  modifiedAt: string;
}

/** What `collect` found in an attempt's folder that is not an artifact, and why. */
export interface RejectedArtifact {
  name: string;
  problem: string;
}

/** An artifact opened for reading; the caller consumes or destroys `stream`. */
export interface OpenedArtifact {
  info: ArtifactInfo;
  stream: Readable;
}

export const DEFAULT_ARTIFACT_MAX_BYTES = 64 * 1024 * 1024;

/** Owner-only: a screenshot of a logged-in page is as private as the login. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Attempt folders are plain decimal numbers, so one attempt has exactly one folder name. */
const ATTEMPT_DIR = /^[1-9][0-9]{0,8}$/;
const MAX_ATTEMPT = 999_999_999;

/**
 * Artifacts on the local disk: `<root>/<runId>/<stageId>/<attempt>/<name>`,
 * folders 0700, files 0600. The only code that knows where artifacts live.
 *
 * Every id and name is checked before it touches a path, so nothing from a
 * request or a stage can walk out of the root. Links are never followed:
 * listing skips anything that is not a plain folder or file, and opening
 * refuses a link (O_NOFOLLOW) at the file and checks every folder above it.
 * Writes go to a hidden temp file beside the target and are renamed into
 * place, so a reader sees a whole artifact or none.
 */
export class ArtifactStore {
  /** Absolute root folder. Never leaves this process in a response. */
  private readonly root: string;
  readonly maxBytes: number;
  private rootMade = false;

  constructor(options: ArtifactStoreOptions) {
    this.root = resolve(options.root);
    this.maxBytes = options.maxBytes ?? DEFAULT_ARTIFACT_MAX_BYTES;
  }

  /**
   * The attempt's folder, created (with its parents) owner-only. Handed to a
   * `run` stage as `STAGEFLOW_ARTIFACTS_DIR`; nothing else should see it.
   *
   * Synchronous on purpose, like the runner's stage workspace: a few local
   * mkdir/lstat calls on every stage's hot path, where each async call would
   * cost a thread-pool round trip (measured: 0.7 ms a stage, async).
   *
   * @throws ArtifactOwnerError (400) for a bad run id, stage id or attempt
   * @throws ArtifactFolderUnsafeError (500) when a link or a file is where a folder belongs
   */
  attemptDir(owner: ArtifactOwner): string {
    const dir = this.dirOf(owner);
    if (!this.rootMade) {
      mkdirSync(this.root, { recursive: true, mode: DIR_MODE });
      this.rootMade = true;
    }
    // One level at a time, never through a link: mkdir -p would follow one out of the root.
    for (const level of this.levels(owner)) {
      try {
        mkdirSync(level, { mode: DIR_MODE });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      if (!lstatSync(level).isDirectory()) throw new ArtifactFolderUnsafeError(owner);
    }
    return dir;
  }

  /**
   * Stores `data` as the attempt's artifact `name`, atomically (temp file,
   * then rename). A second write of the same name replaces the first.
   *
   * @throws ArtifactNameError (400), ArtifactOwnerError (400), ArtifactTooLargeError (413)
   */
  async write(owner: ArtifactOwner, name: string, data: Uint8Array): Promise<ArtifactInfo> {
    assertArtifactName(name);
    this.dirOf(owner);
    if (data.byteLength > this.maxBytes) throw new ArtifactTooLargeError(name, data.byteLength, this.maxBytes);
    const dir = this.attemptDir(owner);
    const target = join(dir, name);
    const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, FILE_MODE);
    try {
      try {
        await handle.writeFile(data);
        // On disk before the rename, so a crash never leaves a short file under the real name.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
    return this.infoOf(owner, name, await lstat(target));
  }

  /**
   * What a finished `run` stage attempt left in its folder: the artifacts
   * (plain files with a valid name, within the size cap), and what is not one.
   * What is not one is removed (a link itself, never its target), so the
   * folder holds exactly the listed artifacts and the cap bounds the disk.
   */
  async collect(owner: ArtifactOwner): Promise<{ artifacts: ArtifactInfo[]; rejected: RejectedArtifact[] }> {
    const dir = this.dirOf(owner);
    const artifacts: ArtifactInfo[] = [];
    const rejected: RejectedArtifact[] = [];
    // Synchronous reads, as in attemptDir: on every run stage's hot path, and the folder is usually empty.
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { artifacts, rejected };
      throw error;
    }
    for (const name of names) {
      const problem = artifactNameProblem(name);
      let stats: Stats;
      try {
        stats = lstatSync(join(dir, name));
      } catch {
        continue;
      }
      if (stats.isSymbolicLink()) rejected.push({ name, problem: 'it is a symbolic link; leave the file itself' });
      else if (stats.isDirectory()) rejected.push({ name, problem: 'it is a folder; artifacts are files directly in the folder' });
      else if (!stats.isFile()) rejected.push({ name, problem: 'it is not a regular file' });
      else if (problem) rejected.push({ name, problem: `it is not an artifact name: ${problem}` });
      else if (stats.size > this.maxBytes) {
        rejected.push({ name, problem: `it is ${stats.size} bytes, over the limit of ${this.maxBytes} bytes per artifact` });
      } else {
        artifacts.push(this.infoOf(owner, name, stats));
        continue;
      }
      // fs.rm works on the entry itself (lstat): a link is unlinked, its target untouched.
      await rm(join(dir, name), { recursive: true, force: true });
    }
    return { artifacts: sortArtifacts(artifacts), rejected: rejected.sort((a, b) => compare(a.name, b.name)) };
  }

  /**
   * Every artifact of a run, by stage, attempt and name. A run with none (or
   * unknown here) has an empty list; whether the run exists is the caller's
   * question.
   *
   * @throws ArtifactOwnerError (400) for a bad run id
   */
  async list(runId: string): Promise<ArtifactInfo[]> {
    assertId(runId, 'run');
    const runDir = join(this.root, runId);
    const found: ArtifactInfo[] = [];
    if (!(await this.isRealDir(runDir))) return found;
    for (const stage of (await this.entries(runDir)) ?? []) {
      const stageDir = join(runDir, stage.name);
      if (!ID.test(stage.name) || !(await this.isRealDir(stageDir))) continue;
      for (const attempt of (await this.entries(stageDir)) ?? []) {
        const attemptDir = join(stageDir, attempt.name);
        if (!ATTEMPT_DIR.test(attempt.name) || !(await this.isRealDir(attemptDir))) continue;
        const owner = { runId, stageId: stage.name, attempt: Number(attempt.name) };
        for (const file of (await this.entries(attemptDir)) ?? []) {
          if (artifactNameProblem(file.name)) continue;
          const stats = await lstat(join(attemptDir, file.name)).catch(() => undefined);
          if (stats?.isFile()) found.push(this.infoOf(owner, file.name, stats));
        }
      }
    }
    return sortArtifacts(found);
  }

  /**
   * Opens one artifact for reading. Anything at its place that is not a
   * plain file in plain folders (a link, a folder) counts as not found.
   *
   * @throws ArtifactNameError (400), ArtifactOwnerError (400), ArtifactNotFoundError (404)
   */
  async open(owner: ArtifactOwner, name: string): Promise<OpenedArtifact> {
    assertArtifactName(name);
    const dir = this.dirOf(owner);
    const missing = new ArtifactNotFoundError(owner.runId, owner.stageId, owner.attempt, name);
    for (const level of this.levels(owner)) {
      if (!(await this.isRealDir(level))) throw missing;
    }
    let handle;
    try {
      handle = await open(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ELOOP: a link; ENOENT: nothing; ENOTDIR/EISDIR: not a file.
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') throw missing;
      throw error;
    }
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      throw missing;
    }
    return { info: this.infoOf(owner, name, stats), stream: handle.createReadStream({ autoClose: true }) };
  }

  private dirOf(owner: ArtifactOwner): string {
    assertId(owner.runId, 'run');
    assertId(owner.stageId, 'stage');
    if (!Number.isSafeInteger(owner.attempt) || owner.attempt < 1 || owner.attempt > MAX_ATTEMPT) {
      throw new ArtifactOwnerError(`the attempt ${JSON.stringify(owner.attempt)} is not a whole number from 1 to ${MAX_ATTEMPT}`);
    }
    return join(this.root, owner.runId, owner.stageId, String(owner.attempt));
  }

  /** The run's, the stage's and the attempt's folder, outermost first. */
  private levels(owner: ArtifactOwner): string[] {
    const run = join(this.root, owner.runId);
    const stage = join(run, owner.stageId);
    return [run, stage, join(stage, String(owner.attempt))];
  }

  private infoOf(owner: ArtifactOwner, name: string, stats: Stats): ArtifactInfo {
    return {
      runId: owner.runId,
      stageId: owner.stageId,
      attempt: owner.attempt,
      name,
      sizeBytes: stats.size,
      contentType: contentTypeOf(name),
      modifiedAt: stats.mtime.toISOString(),
    };
  }

  private async isRealDir(path: string): Promise<boolean> {
    const stats = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw error;
    });
    return stats?.isDirectory() === true;
  }

  private async entries(dir: string): Promise<{ name: string }[] | undefined> {
    try {
      return (await readdir(dir)).map((name) => ({ name }));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
  }
}

/**
 * Throws {@link ArtifactNameError} unless `name` is one safe file name
 * (`ARTIFACT_NAME_PATTERN` of the contracts lib).
 */
export function assertArtifactName(name: unknown): asserts name is string {
  const problem = artifactNameProblem(name);
  if (problem) throw new ArtifactNameError(typeof name === 'string' ? name : String(name), problem);
}

function assertId(id: unknown, what: 'run' | 'stage'): asserts id is string {
  if (typeof id !== 'string' || !ID.test(id)) {
    throw new ArtifactOwnerError(`the ${what} id ${JSON.stringify(String(id).slice(0, 200))} is not an id`);
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sortArtifacts(list: ArtifactInfo[]): ArtifactInfo[] {
  return list.sort((a, b) => compare(a.stageId, b.stageId) || a.attempt - b.attempt || compare(a.name, b.name));
}
