import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { RedisKeys, STAGE_JOB, STAGE_QUEUE, StageJobPayload, stageJobId } from '@stageflow/contracts';
import { ENGINE_OPTIONS } from '../engine.tokens';
import type { ResolvedEngineOptions } from '../engine.options';
import { EngineRedis } from '../store/redis.adapter';

/** BullMQ states in which a stage job will still be (or is being) processed. */
const LIVE_JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

/**
 * The stage queue (BullMQ), as the engine uses it: add a job for one attempt,
 * ask whether an attempt's job is still alive. The engine owns retries, so
 * every job has `attempts: 1`; the job id is {@link stageJobId}, so an attempt
 * is enqueued at most once.
 */
@Injectable()
export class StageQueue implements OnApplicationShutdown {
  readonly queue: Queue<StageJobPayload>;

  constructor(
    redis: EngineRedis,
    keys: RedisKeys,
    @Inject(ENGINE_OPTIONS) private readonly options: ResolvedEngineOptions,
  ) {
    this.queue = new Queue<StageJobPayload>(STAGE_QUEUE, {
      connection: redis.dedicated('queue'),
      prefix: keys.bullPrefix(),
    });
    // Errors also surface on the calls that hit them; the listener keeps an
    // outage from crashing the process as an unhandled 'error' event.
    this.queue.on('error', () => undefined);
  }

  async add(jobs: readonly StageJobPayload[]): Promise<void> {
    const opts = (data: StageJobPayload) => ({
      jobId: stageJobId(data),
      attempts: 1,
      removeOnComplete: { count: this.options.keepCompletedJobs },
      removeOnFail: { count: this.options.keepFailedJobs },
    });
    // One job (the common case: the next stage of a chain, a retry) skips addBulk's MULTI.
    if (jobs.length === 1) await this.queue.add(STAGE_JOB, jobs[0], opts(jobs[0]));
    else if (jobs.length) await this.queue.addBulk(jobs.map((data) => ({ name: STAGE_JOB, data, opts: opts(data) })));
  }

  /** True when the attempt's job is waiting, delayed or being processed. */
  async isAlive(job: StageJobPayload): Promise<boolean> {
    return LIVE_JOB_STATES.includes(await this.queue.getJobState(stageJobId(job)));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
