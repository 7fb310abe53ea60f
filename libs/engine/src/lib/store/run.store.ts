import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import {
  RedisKeys,
  RunEvent,
  RunRecord,
  RunState,
  StageRecord,
  StageState,
} from '@stageflow/contracts';
import type { Pipeline } from '@stageflow/pipeline';
import { Clock } from '../clock.adapter';
import { ENGINE_OPTIONS } from '../engine.tokens';
import type { ResolvedEngineOptions } from '../engine.options';
import { pipelineGraph } from '../scheduling/pipeline.graph';
import type { PlannedStage, RunPlanInput } from '../scheduling/run-plan';
import { Commit, CommitResult, parseCommitReply } from './commit';
import { decodeRun, decodeStage, parseJson, RUN_FIELDS } from './record.codec';
import { EngineRedis } from './redis.adapter';

/** The parts of a run that never change after it starts; cached per process. */
export interface RunSnapshot {
  pipeline: Pipeline;
  input: unknown;
  maxActiveStages: number;
}

export interface PlanState extends RunPlanInput {
  pipeline: Pipeline;
}

const SNAPSHOT_CACHE_SIZE = 1000;
const RUN_LIST_FIELDS = [
  RUN_FIELDS.id,
  RUN_FIELDS.pipeline,
  RUN_FIELDS.state,
  RUN_FIELDS.reason,
  RUN_FIELDS.input,
  RUN_FIELDS.createdAt,
  RUN_FIELDS.updatedAt,
  RUN_FIELDS.endedAt,
  RUN_FIELDS.maxActiveStages,
] as const;

/**
 * The engine's Redis repository: runs, stages, events and the per-run mutex.
 * Every write goes through {@link RunStore.commit} (one Lua script), so state
 * and events never disagree.
 */
@Injectable()
export class RunStore {
  private readonly logger = new Logger('RunStore');
  private readonly snapshots = new Map<string, RunSnapshot>();

  constructor(
    private readonly redis: EngineRedis,
    readonly keys: RedisKeys,
    private readonly clock: Clock,
    @Inject(ENGINE_OPTIONS) private readonly options: ResolvedEngineOptions,
  ) {}

  newCommit(runId: string): Commit {
    return new Commit(this.keys, runId, this.clock.iso(), this.options.allEventsMaxLen);
  }

  /** Applies a commit; retried with backoff while Redis is unreachable (a resent commit is recognised). */
  async commit(commit: Commit): Promise<CommitResult> {
    const args = commit.toArgs();
    const reply = await this.retrying('commit', () => this.redis.client.sfCommit(...args));
    return parseCommitReply(reply);
  }

  /**
   * Applies a commit and then reads fields of a hash, in one round trip (the
   * read sees the commit's writes). Not retried: use for idempotent steps only.
   */
  async commitThenRead(commit: Commit, key: string, fields: readonly string[]): Promise<[CommitResult, (string | null)[]]> {
    const replies = (await this.redis.client
      .pipeline()
      .sfCommit(...commit.toArgs())
      .hmget(key, ...fields)
      .exec()) ?? [];
    const failed = replies.find(([error]) => error);
    if (failed) throw failed[0];
    return [parseCommitReply(replies[0][1]), replies[1][1] as (string | null)[]];
  }

  /** Immutable parts of a run (pipeline snapshot, input), or undefined when the run does not exist. */
  async snapshot(runId: string): Promise<RunSnapshot | undefined> {
    const cached = this.snapshots.get(runId);
    if (cached) return cached;
    const [snapshot, input, maxActive] = await this.redis.client.hmget(
      this.keys.run(runId),
      RUN_FIELDS.snapshot,
      RUN_FIELDS.input,
      RUN_FIELDS.maxActiveStages,
    );
    if (!snapshot) return undefined;
    const value: RunSnapshot = {
      pipeline: JSON.parse(snapshot) as Pipeline,
      input: parseJson(input, null),
      maxActiveStages: Number(maxActive),
    };
    if (this.snapshots.size >= SNAPSHOT_CACHE_SIZE) {
      const oldest = this.snapshots.keys().next().value;
      if (oldest !== undefined) this.snapshots.delete(oldest);
    }
    this.snapshots.set(runId, value);
    return value;
  }

  /** Remembers the snapshot of a run this process just created (saves a read on its first advance). */
  rememberSnapshot(runId: string, snapshot: RunSnapshot): void {
    this.snapshots.set(runId, snapshot);
  }

  async runState(runId: string): Promise<RunState | undefined> {
    return ((await this.redis.client.hget(this.keys.run(runId), RUN_FIELDS.state)) ?? undefined) as RunState | undefined;
  }

  async runFields(runId: string, fields: readonly string[]): Promise<(string | null)[]> {
    return this.redis.client.hmget(this.keys.run(runId), ...fields);
  }

  async readRun(runId: string): Promise<RunRecord | undefined> {
    const values = await this.redis.client.hmget(this.keys.run(runId), ...RUN_LIST_FIELDS);
    return decodeRun(zip(RUN_LIST_FIELDS, values));
  }

  async readStage(runId: string, stageId: string): Promise<StageRecord | undefined> {
    return decodeStage(await this.redis.client.hgetall(this.keys.stage(runId, stageId)));
  }

  /** Raw fields of a stage hash (nulls where absent). */
  async stageFields(runId: string, stageId: string, fields: readonly string[]): Promise<(string | null)[]> {
    return this.redis.client.hmget(this.keys.stage(runId, stageId), ...fields);
  }

  /** All stage records of a run, in pipeline order. */
  async readStages(runId: string, pipeline: Pipeline): Promise<StageRecord[]> {
    const batch = this.redis.client.pipeline();
    for (const stage of pipeline.stages) batch.hgetall(this.keys.stage(runId, stage.id));
    const replies = (await batch.exec()) ?? [];
    const stages: StageRecord[] = [];
    for (const [error, hash] of replies) {
      if (error) throw error;
      const record = decodeStage(hash as Record<string, string>);
      if (record) stages.push(record);
    }
    return stages;
  }

  /**
   * What the scheduler needs, in one round trip (LOAD_PLAN_LUA): the run's
   * state, every stage's state, and the outputs of successful parents of the
   * stages about to be decided (only those: outputs can be large). With
   * `lock`, takes the run's advance mutex first; 'locked' when someone holds it.
   */
  async loadPlanState(runId: string, lock?: { token: string }): Promise<PlanState | 'locked' | undefined> {
    const snapshot = await this.snapshot(runId);
    if (!snapshot) return undefined;
    const { pipeline } = snapshot;
    const keys = [
      this.keys.run(runId),
      this.keys.runAdvanceLock(runId),
      ...pipeline.stages.map((s) => this.keys.stage(runId, s.id)),
    ];
    const graph = pipelineGraph(pipeline);
    const reply = (await this.redis.client.sfLoadPlan(
      keys.length,
      ...keys,
      lock?.token ?? '',
      String(this.options.advanceLockMs),
      graph.parentIndexes,
    )) as (string | number | null)[];
    if (reply[0] === 0) return 'locked';
    const runState = reply[1] as RunState | null;
    if (!runState) return undefined;
    const stages: Record<string, PlannedStage> = {};
    pipeline.stages.forEach((stage, i) => {
      const [state, attempt, reason] = reply.slice(2 + i * 3, 5 + i * 3) as (string | null)[];
      stages[stage.id] = {
        state: (state ?? 'pending') as StageState,
        attempt: Number(attempt ?? 0),
        ...(reason ? { reason } : {}),
      };
    });
    for (let at = 2 + pipeline.stages.length * 3; at < reply.length; at += 2) {
      const id = pipeline.stages[Number(reply[at]) - 1].id;
      stages[id].output = parseJson<{ output?: unknown }>(reply[at + 1] as string | null, {}).output;
    }
    return { pipeline, runState, input: snapshot.input, maxActiveStages: snapshot.maxActiveStages, stages };
  }

  /** Events after `afterSeq`, oldest first. */
  async readEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    const entries = await this.redis.client.xrange(
      this.keys.runEvents(runId),
      `${afterSeq + 1}-0`,
      '+',
      'COUNT',
      limit,
    );
    return entries.map(([, fields]) => decodeEvent(fields));
  }

  /**
   * Runs `fn` holding the run's advance mutex (SET NX PX, released by a Lua
   * compare-and-delete so a holder whose lock expired never frees another's).
   * Waits with a short backoff while someone else holds it.
   */
  async withRunLock<T>(runId: string, fn: () => Promise<T>): Promise<T> {
    const key = this.keys.runAdvanceLock(runId);
    const token = await this.acquire(key, this.options.advanceLockMs, this.options.advanceLockMs * 4);
    try {
      return await fn();
    } finally {
      await this.release(key, token);
    }
  }

  /** Takes a lock if free; undefined when someone holds it. */
  async tryLock(key: string, ttlMs: number): Promise<string | undefined> {
    const token = randomBytes(8).toString('hex');
    return (await this.redis.client.set(key, token, 'PX', ttlMs, 'NX')) === 'OK' ? token : undefined;
  }

  async release(key: string, token: string): Promise<void> {
    try {
      await this.redis.client.sfUnlock(key, token);
    } catch (error) {
      // The lock expires on its own; failing to free it early only delays the next holder.
      this.logger.warn({ msg: `could not release ${key}: ${(error as Error).message}` });
    }
  }

  /** Runs created, newest first: ids with their creation time (ms), from `offset` in the score window ≤ `maxScore`. */
  async runIndexPage(maxScore: string, offset: number, count: number): Promise<{ id: string; score: number }[]> {
    const flat = await this.redis.client.zrevrangebyscore(
      this.keys.runsIndex(),
      maxScore,
      '-inf',
      'WITHSCORES',
      'LIMIT',
      offset,
      count,
    );
    const page: { id: string; score: number }[] = [];
    for (let i = 0; i < flat.length; i += 2) page.push({ id: flat[i], score: Number(flat[i + 1]) });
    return page;
  }

  async readRuns(runIds: readonly string[]): Promise<(RunRecord | undefined)[]> {
    if (!runIds.length) return [];
    const batch = this.redis.client.pipeline();
    for (const id of runIds) batch.hmget(this.keys.run(id), ...RUN_LIST_FIELDS);
    const replies = (await batch.exec()) ?? [];
    return replies.map(([error, values]) => {
      if (error) throw error;
      return decodeRun(zip(RUN_LIST_FIELDS, values as (string | null)[]));
    });
  }

  async activeRunIds(): Promise<string[]> {
    return this.redis.client.smembers(this.keys.activeRuns());
  }

  async forgetActive(runId: string): Promise<void> {
    await this.redis.client.srem(this.keys.activeRuns(), runId);
  }

  async setStageField(runId: string, stageId: string, field: string, value: string | undefined): Promise<void> {
    const key = this.keys.stage(runId, stageId);
    if (value === undefined) await this.redis.client.hdel(key, field);
    else await this.redis.client.hset(key, field, value);
  }

  private async acquire(key: string, ttlMs: number, waitMs: number): Promise<string> {
    const deadline = Date.now() + waitMs;
    let pause = 1;
    for (;;) {
      const token = await this.tryLock(key, ttlMs);
      if (token) return token;
      if (Date.now() > deadline) {
        throw new Error(`could not take ${key} within ${waitMs} ms; another process holds it`);
      }
      await this.clock.sleep(pause);
      pause = Math.min(pause * 2, 25);
    }
  }

  /**
   * Retries a write while Redis is unreachable. Commands already wait through
   * reconnects (maxRetriesPerRequest: null); this covers the errors that still
   * surface (a connection reset mid-reply, LOADING after a restart).
   */
  async retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.options.writeRetryMs;
    let pause = 100;
    for (;;) {
      try {
        return await fn();
      } catch (error) {
        if (!isTransient(error) || this.redis.closed || Date.now() > deadline) throw error;
        this.logger.warn({ msg: `${what} failed (${(error as Error).message}); retrying in ${pause} ms` });
        await this.clock.sleep(pause);
        pause = Math.min(pause * 2, 2000);
      }
    }
  }
}

const TRANSIENT = /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|Connection is closed|LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN/;

export function isTransient(error: unknown): boolean {
  return error instanceof Error && TRANSIENT.test(error.message);
}

export function decodeEvent(fields: string[]): RunEvent {
  const at = fields.indexOf('e');
  return JSON.parse(fields[at + 1]) as RunEvent;
}

function zip(fields: readonly string[], values: (string | null)[]): Record<string, string> {
  const hash: Record<string, string> = {};
  fields.forEach((field, i) => {
    const value = values[i];
    if (value !== null && value !== undefined) hash[field] = value;
  });
  return hash;
}
