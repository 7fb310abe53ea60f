/**
 * Every Redis key Stageflow uses is built here, under one prefix (default
 * `sf:`; tests pass their own so they never collide). No other file spells a key.
 */
export class RedisKeys {
  constructor(readonly prefix = 'sf:') {}

  /** Hash: the run record (see RunRecord). */
  run(runId: string): string {
    return `${this.prefix}run:${runId}`;
  }
  /** Hash: one stage of a run (see StageRecord). */
  stage(runId: string, stageId: string): string {
    return `${this.prefix}run:${runId}:stage:${stageId}`;
  }
  /** Stream: the run's event history; entry ids are `<seq>-0`. */
  runEvents(runId: string): string {
    return `${this.prefix}run:${runId}:events`;
  }
  /** String: the run's last event sequence number. */
  runEventSeq(runId: string): string {
    return `${this.prefix}run:${runId}:seq`;
  }
  /** String: short mutex held while a run is advanced (joins, slots). */
  runAdvanceLock(runId: string): string {
    return `${this.prefix}run:${runId}:advance-lock`;
  }
  /** Sorted set: all run ids by creation time (ms). */
  runsIndex(): string {
    return `${this.prefix}runs`;
  }
  /** Set: ids of runs not yet in a terminal state. */
  activeRuns(): string {
    return `${this.prefix}runs:active`;
  }
  /** Stream: every event of every run, capped; backs "subscribe to all". */
  allEvents(): string {
    return `${this.prefix}events`;
  }
  /** Pub/sub channel: a run was cancelled; runners kill its stage processes. */
  cancelChannel(): string {
    return `${this.prefix}cancel`;
  }
  /** Hash: registered pipelines, name → YAML source. */
  pipelines(): string {
    return `${this.prefix}pipelines`;
  }
  /** Hash: registration metadata, name → JSON { updatedAt, stages }. */
  pipelineMeta(): string {
    return `${this.prefix}pipelines:meta`;
  }
  /** BullMQ prefix: BullMQ builds its own keys under it. */
  bullPrefix(): string {
    return `${this.prefix}bull`;
  }
}
