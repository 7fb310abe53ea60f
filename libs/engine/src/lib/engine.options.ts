import type { RedisConfig } from '@stageflow/config';

export type EngineRedisConfig = RedisConfig;

/** Tuning of the run engine. Every field has a default; tests shorten some. */
export interface EngineOptions {
  /**
   * How long a run's advance mutex lives if its holder dies while holding it.
   * Advancing takes milliseconds; the mutex only has to outlive that.
   * @defaultValue 5000
   */
  advanceLockMs?: number;
  /** Approximate number of events kept in the all-runs stream. @defaultValue 10000 */
  allEventsMaxLen?: number;
  /**
   * How long a state write is retried (with backoff) while Redis is away,
   * before the error is given up on and the abandoned-run sweeper takes over.
   * @defaultValue 120000
   */
  writeRetryMs?: number;
  /** Completed stage jobs BullMQ keeps (the engine's own record is the stage hash). @defaultValue 1000 */
  keepCompletedJobs?: number;
  /** Failed stage jobs BullMQ keeps, for inspection. @defaultValue 5000 */
  keepFailedJobs?: number;
}

export type ResolvedEngineOptions = Required<EngineOptions>;

export function resolveEngineOptions(options: EngineOptions = {}): ResolvedEngineOptions {
  return {
    advanceLockMs: options.advanceLockMs ?? 5000,
    allEventsMaxLen: options.allEventsMaxLen ?? 10000,
    writeRetryMs: options.writeRetryMs ?? 120000,
    keepCompletedJobs: options.keepCompletedJobs ?? 1000,
    keepFailedJobs: options.keepFailedJobs ?? 5000,
  };
}
