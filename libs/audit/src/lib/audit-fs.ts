import { chmod, mkdir, open, stat } from 'node:fs/promises';

/** The file operations the audit log needs, so tests can swap or break them. */
export interface AuditFs {
  /** `mkdir -p` the folder, then make it exactly `mode` (it may have existed with a looser one). */
  ensureDir(dir: string, mode: number): Promise<void>;
  /** Sets `mode` on the file if it exists. */
  ensureFileMode(file: string, mode: number): Promise<void>;
  /** Appends `data` with one `write(2)` on an `O_APPEND` descriptor; creates the file with `mode`. */
  append(file: string, data: Buffer, mode: number): Promise<void>;
  /** The file's size in bytes, or `undefined` when it does not exist. */
  size(file: string): Promise<number | undefined>;
  /** `length` bytes from `position`. */
  read(file: string, position: number, length: number): Promise<Buffer>;
}

function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

/** {@link AuditFs} on the real file system. */
export const nodeAuditFs: AuditFs = {
  async ensureDir(dir, mode) {
    await mkdir(dir, { recursive: true, mode });
    await chmod(dir, mode);
  },
  async ensureFileMode(file, mode) {
    try {
      await chmod(file, mode);
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
  },
  async append(file, data, mode) {
    // 'a' = O_WRONLY | O_CREAT | O_APPEND: concurrent writers (Host processes)
    // each land whole lines at the end; a short line is one write.
    const handle = await open(file, 'a', mode);
    try {
      const { bytesWritten } = await handle.write(data);
      if (bytesWritten !== data.length)
        throw new Error(`short write to ${file}: ${bytesWritten} of ${data.length} bytes`);
    } finally {
      await handle.close();
    }
  },
  async size(file) {
    try {
      return (await stat(file)).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  },
  async read(file, position, length) {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  },
};
