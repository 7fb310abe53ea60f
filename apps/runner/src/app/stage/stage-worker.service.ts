import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Job, Worker } from 'bullmq';
import type { RunnerConfig } from '@stageflow/config';
import { parseStageJobPayload, RedisKeys, STAGE_QUEUE, StageJobPayload } from '@stageflow/contracts';
import { CancelBus, EngineRedis, StageAttempts } from '@stageflow/engine';
import { RUNNER_CONFIG, RUNNER_OPTIONS } from '../runner.tokens';
import type { ResolvedRunnerOptions } from '../runner.options';
import { isLoginGate, type JobStageDefinition } from '@stageflow/pipeline';
import { LoginGateExecutor } from './login/login-gate.executor';
import { StageExecutor } from './stage-executor.service';
import { StageLease } from './stage-lease.service';
import { StageProcessAdapter } from './stage-process.adapter';

/**
 * The BullMQ worker of the stage queue. Stall settings make a killed
 * runner's job come back quickly: its lock (lockDurationMs) expires, the next
 * stalled check (every stalledIntervalMs) moves it back to wait, another
 * runner takes it and records the attempt as lost. BullMQ never retries a
 * stage (attempts: 1); the engine does.
 */
@Injectable()
export class StageWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('StageWorker');
  private worker?: Worker<StageJobPayload>;

  constructor(
    private readonly attempts: StageAttempts,
    private readonly executor: StageExecutor,
    private readonly loginGates: LoginGateExecutor,
    private readonly processes: StageProcessAdapter,
    private readonly cancelBus: CancelBus,
    private readonly lease: StageLease,
    private readonly redis: EngineRedis,
    private readonly keys: RedisKeys,
    @Inject(RUNNER_CONFIG) private readonly config: RunnerConfig,
    @Inject(RUNNER_OPTIONS) private readonly options: ResolvedRunnerOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.cancelBus.subscribe((runId) => {
      this.executor.cancelRun(runId);
      void this.lease.withdrawRun(runId);
    });
    // Before the first job: a grant must find a listener for every stage this runner parks.
    await this.lease.listen();
    this.worker = new Worker<StageJobPayload>(STAGE_QUEUE, (job) => this.process(job), {
      connection: this.redis.dedicated('worker'),
      prefix: this.keys.bullPrefix(),
      concurrency: this.config.concurrency,
      lockDuration: this.config.lockDurationMs,
      stalledInterval: this.config.stalledIntervalMs,
      // A job's first stall sends it back to wait (the next runner records the
      // attempt as lost); a second stall fails it, which we hear in 'failed'.
      maxStalledCount: 1,
    });
    let lastError = 0;
    this.worker.on('error', (error) => {
      // While Redis is away every connection retry errors: one line per 5 s is enough.
      if (Date.now() - lastError < 5000) return;
      lastError = Date.now();
      this.logger.warn({ msg: `stage worker error: ${error.message}` });
    });
    this.worker.on('failed', (job, error) => void this.onJobFailed(job, error));
    this.logger.log({
      msg: `taking stage jobs (concurrency ${this.config.concurrency}, lock ${this.config.lockDurationMs} ms, stalled check ${this.config.stalledIntervalMs} ms)`,
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.worker) return;
    // Stop taking jobs; running stages get a grace period to finish, then are
    // stopped and recorded as interrupted (retried if attempts remain).
    const closing = this.worker.close();
    const grace = setTimeout(() => this.executor.interruptAll(), this.options.shutdownGraceMs);
    await closing;
    clearTimeout(grace);
    this.logger.log({ msg: 'stopped taking stage jobs' });
  }

  /** The processor: claim, then run, or record a lost attempt. Never throws for a stage's own failure. */
  async process(job: Job<StageJobPayload>): Promise<void> {
    let payload: StageJobPayload;
    try {
      payload = parseStageJobPayload(job.data);
    } catch (error) {
      this.logger.error({ jobId: job.id, msg: `dropped a malformed stage job: ${(error as Error).message}` });
      return;
    }
    const ids = { runId: payload.runId, stageId: payload.stageId, attempt: payload.attempt };
    const admission = await this.lease.admit(payload);
    if (admission.outcome !== 'go') {
      this.logger.log({ ...ids, msg: admission.outcome === 'parked' ? admission.reason : `job dropped: ${admission.reason}` });
      return;
    }
    const claim = await this.attempts.claim(payload, this.processes.host);
    if (claim.outcome === 'drop') {
      this.logger.log({ ...ids, msg: `job dropped: ${claim.reason}` });
      return;
    }
    if (claim.outcome === 'lost') {
      const reason = `runner lost while running attempt ${payload.attempt}`;
      this.logger.warn({ ...ids, msg: reason });
      // Record first, so the lost runner (if it is somehow alive) cannot record an outcome; then kill its leftovers.
      await this.attempts.recordLost(payload, reason);
      if (claim.pid !== undefined && claim.host === this.processes.host) {
        if (this.processes.killLeftover(claim.pid, claim.pidStart)) {
          this.logger.warn({ ...ids, pid: claim.pid, msg: 'killed the process group the lost attempt left behind' });
        }
      }
      return;
    }
    if (isLoginGate(claim.stage)) {
      await this.loginGates.run(payload, claim, admission.grant);
      return;
    }
    const result = await this.executor.execute(payload, { ...claim, stage: claim.stage as JobStageDefinition }, admission.grant);
    await this.attempts.finish(payload, result);
  }

  private async onJobFailed(job: Job<StageJobPayload> | undefined, error: Error): Promise<void> {
    if (!job) return;
    try {
      const payload = parseStageJobPayload(job.data);
      // Typically "job stalled more than allowable limit"; a no-op unless the
      // attempt is still queued or running (compare-and-set).
      const outcome = await this.attempts.recordLost(payload, `stage job failed in the queue: ${error.message}`);
      if (outcome === 'recorded') {
        this.logger.warn({ runId: payload.runId, stageId: payload.stageId, attempt: payload.attempt, msg: error.message });
      }
    } catch (failure) {
      this.logger.error({ jobId: job.id, msg: `could not record a failed stage job: ${(failure as Error).message}` });
    }
  }
}
