import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';

/**
 * The few /proc reads and signals browser-host needs for processes it did not spawn
 * itself: browsers it re-adopts after a restart, and agent-browser daemons (started by
 * a stage's process). `@stageflow/browser-hosts` has the same helpers but does not
 * export them; these stay small on purpose.
 */
export class ProcessTable {
  /** A live process on this machine; a zombie (exited, not reaped) counts as gone. */
  isAlive(pid: number): boolean {
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
    }
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return true;
    }
  }

  /** `argv` from /proc, or `undefined` when the process is gone or unreadable. */
  async argv(pid: number): Promise<string[] | undefined> {
    const text = await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => undefined);
    return text === undefined ? undefined : text.split('\0').filter(Boolean);
  }

  /** The environment from /proc, or `undefined` when gone or owned by another user. */
  async environ(pid: number): Promise<Record<string, string> | undefined> {
    const text = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => undefined);
    if (text === undefined) return undefined;
    const env: Record<string, string> = {};
    for (const entry of text.split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  }

  /** Pids of the processes whose executable is named `name` (Linux /proc). */
  async pidsNamed(name: string): Promise<number[]> {
    const entries = await readdir('/proc').catch(() => [] as string[]);
    const pids: number[] = [];
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const argv = await this.argv(Number(entry));
      if (argv && basename(argv[0] ?? '') === name) pids.push(Number(entry));
    }
    return pids;
  }

  /** Signals `pid` alone. False when nothing was there. */
  signal(pid: number, signal: NodeJS.Signals): boolean {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Signals the process group `pid` leads (browsers are spawned detached), or `pid` alone. */
  signalGroup(pid: number, signal: NodeJS.Signals): boolean {
    return this.signal(-pid, signal) || this.signal(pid, signal);
  }

  /** Polls (bounded) until `pid` is gone; true when it went in time. */
  async waitForExit(pid: number, timeoutMs: number, pollMs = 50): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.isAlive(pid)) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    return true;
  }
}

/** `--name=value` of an argv, if present. */
export function switchValue(argv: readonly string[], name: string): string | undefined {
  const prefix = `${name}=`;
  const hit = argv.find((a) => a.startsWith(prefix));
  return hit === undefined ? undefined : hit.slice(prefix.length);
}
