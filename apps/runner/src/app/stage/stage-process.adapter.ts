import { Injectable } from '@nestjs/common';
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

export interface ProcessSpec {
  /** A string runs through `/bin/sh -c`; a list is argv, spawned directly. */
  command: string | readonly string[];
  cwd: string;
  env: Record<string, string>;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The process could not be started (e.g. argv[0] not found). */
  startError?: Error;
}

/** How long the pipes may stay open after the leader exits before they are cut. */
const PIPE_CLOSE_WAIT_MS = 2000;

/**
 * One stage process, leader of its own process group (`detached: true`), so
 * every signal goes to the whole group: a stage's children and grandchildren
 * are stopped with it.
 */
export class StageProcess {
  readonly exited: Promise<ProcessExit>;
  private killTimer?: NodeJS.Timeout;

  constructor(private readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      let exit: ProcessExit | undefined;
      child.once('error', (error) => {
        // 'error' without a pid: spawning failed; 'exit' never comes.
        if (child.pid === undefined) resolve({ code: null, signal: null, startError: error });
      });
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        // The stage is over: whatever it left running in its group goes too.
        this.signal('SIGKILL');
        clearTimeout(this.killTimer);
        const cut = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, PIPE_CLOSE_WAIT_MS);
        child.once('close', () => {
          clearTimeout(cut);
          resolve(exit as ProcessExit);
        });
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onOutput(listener: (stream: 'stdout' | 'stderr', chunk: Buffer) => void): void {
    this.child.stdout?.on('data', (chunk: Buffer) => listener('stdout', chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => listener('stderr', chunk));
  }

  /** Sends a signal to the whole process group; false when the group is gone. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.child.pid === undefined) return false;
    try {
      process.kill(-this.child.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** SIGTERM to the group, SIGKILL after `graceMs` if anything is left. */
  terminate(graceMs: number): void {
    if (!this.signal('SIGTERM') || this.killTimer) return;
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    this.killTimer.unref();
  }
}

/** Spawning and signalling stage processes, behind an adapter (STYLE rule 5). */
@Injectable()
export class StageProcessAdapter {
  readonly host = hostname();
  private baseEnv?: Record<string, string>;

  start(spec: ProcessSpec): StageProcess {
    const [file, args] =
      typeof spec.command === 'string' ? ['/bin/sh', ['-c', spec.command]] : [spec.command[0], spec.command.slice(1)];
    const child = spawn(file, args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new StageProcess(child);
  }

  /**
   * The process's start time (clock ticks since boot, /proc/<pid>/stat field
   * 22). Stored with the pid so a later runner never signals a recycled pid.
   */
  startTime(pid: number): string | undefined {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 2 (comm) may contain spaces and parentheses: count from the last ')'.
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    } catch {
      return undefined;
    }
  }

  /**
   * Kills the process group a lost attempt left behind, when it still exists
   * and is the one recorded: the leader alive with the recorded start time,
   * or the leader gone but its group still there (Linux does not hand out a
   * pid that is still some group's id, so that group is the stage's).
   */
  killLeftover(pid: number, pidStart: string | undefined): boolean {
    const start = this.startTime(pid);
    if (start !== undefined && start !== pidStart) return false;
    try {
      process.kill(-pid, 'SIGKILL');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The environment of a stage: the runner's own (PATH, HOME, locale) minus
   * Stageflow's settings, which may carry secrets such as the Redis URL; then
   * the stage's `env`; then the STAGEFLOW_* variables, which a stage cannot override.
   */
  environment(stageEnv: Record<string, string>, stageflow: Record<string, string>): Record<string, string> {
    this.baseEnv ??= Object.fromEntries(
      Object.entries(process.env).filter(
        (entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith('STAGEFLOW_'),
      ),
    );
    const env = this.baseEnv;
    return { ...env, ...stageEnv, ...stageflow };
  }
}
