import type { EngineOptions } from '@stageflow/engine';
import { DEFAULT_LOG_LIMITS, LogLimits } from './stage/log-collector';

/** Runner tuning beyond RunnerConfig; defaults are production values, tests shorten them. */
export interface RunnerOptions {
  engine?: EngineOptions;
  /** Time between SIGTERM and SIGKILL when a stage times out or is cancelled. @defaultValue 5000 */
  killGraceMs?: number;
  /**
   * How often a running attempt re-reads its stage's state and stops if it is
   * no longer current (a cancel message lost in a Redis restart, a takeover).
   * @defaultValue 2000
   */
  watchMs?: number;
  /** Log lines are sent in batches at most this often. @defaultValue 200 */
  logFlushMs?: number;
  logLimits?: Partial<LogLimits>;
  /**
   * On SIGTERM, how long running stages may finish before they are stopped and
   * recorded as interrupted (then retried if they have attempts left).
   * @defaultValue 20000
   */
  shutdownGraceMs?: number;
  /** Start the abandoned-run sweeper timer. @defaultValue true */
  sweep?: boolean;
  /** Serve the health endpoint. @defaultValue true */
  health?: boolean;
  /**
   * Open a browser-host stage session for stages with a `browser:` block.
   * Tests of the lease alone turn it off and run such stages as plain commands.
   * @defaultValue true
   */
  browserSessions?: boolean;
}

export interface ResolvedRunnerOptions {
  engine: EngineOptions;
  killGraceMs: number;
  watchMs: number;
  logFlushMs: number;
  logLimits: LogLimits;
  shutdownGraceMs: number;
  sweep: boolean;
  health: boolean;
  browserSessions: boolean;
}

export function resolveRunnerOptions(options: RunnerOptions = {}): ResolvedRunnerOptions {
  return {
    engine: options.engine ?? {},
    killGraceMs: options.killGraceMs ?? 5000,
    watchMs: options.watchMs ?? 2000,
    logFlushMs: options.logFlushMs ?? 200,
    logLimits: { ...DEFAULT_LOG_LIMITS, ...options.logLimits },
    shutdownGraceMs: options.shutdownGraceMs ?? 20000,
    sweep: options.sweep ?? true,
    health: options.health ?? true,
    browserSessions: options.browserSessions ?? true,
  };
}
