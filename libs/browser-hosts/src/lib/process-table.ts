import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** A process as /proc shows it. */
export interface ProcessEntry {
  pid: number;
  argv: string[];
}

/** `/proc/<pid>/cmdline` and `/proc/<pid>/environ` are NUL-separated. */
export function splitNul(text: string): string[] {
  return text.split('\0').filter((part) => part.length > 0);
}

/** Parses `/proc/<pid>/environ` into a map. */
export function parseEnviron(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of splitNul(text)) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/** The state letter of `/proc/<pid>/stat` (`R`, `S`, `Z`…); `comm` may hold spaces and parens, so read after the last `)`. */
export function parseStatState(stat: string): string | undefined {
  const close = stat.lastIndexOf(')');
  return close === -1 ? undefined : stat.slice(close + 2, close + 3) || undefined;
}

/** Every process we may read (Linux /proc). Processes that vanish while we look are skipped. */
export async function listProcesses(procRoot = '/proc'): Promise<ProcessEntry[]> {
  const names = await readdir(procRoot).catch(() => [] as string[]);
  const entries = await Promise.all(
    names
      .filter((name) => /^\d+$/.test(name))
      .map(async (name) => {
        const text = await readFile(`${procRoot}/${name}/cmdline`, 'latin1').catch(() => '');
        return { pid: Number(name), argv: splitNul(text) };
      }),
  );
  return entries.filter((e) => e.argv.length > 0);
}

/** A process's environment, or `undefined` when it is gone or not ours to read. */
export async function readEnviron(pid: number, procRoot = '/proc'): Promise<Record<string, string> | undefined> {
  const text = await readFile(`${procRoot}/${pid}/environ`, 'latin1').catch(() => undefined);
  return text === undefined ? undefined : parseEnviron(text);
}

/**
 * Is `pid` a live process on this machine? `EPERM` means it exists under another
 * user; a zombie has exited and only waits to be reaped, so it counts as dead.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return parseStatState(readFileSync(`/proc/${pid}/stat`, 'latin1')) !== 'Z';
  } catch {
    // No /proc (macOS) or a race with its exit: trust kill(0).
    return true;
  }
}

/**
 * Signals the process group led by `pid` (browsers and displays are spawned detached,
 * so their helpers share it), or just `pid` when it leads none. False when nothing was there.
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return true;
    } catch {
      // ESRCH for the group: try the process alone.
    }
  }
  return false;
}

/** Polls (bounded) until `pid` is gone. True when it exited in time. */
export async function waitForPidExit(pid: number, timeoutMs: number, pollMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isPidAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}
