import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { isTerminalRunState, RedisKeys, StageJobPayload } from '@stageflow/contracts';
import { evaluateCondition, isQueuedStage, StageDefinition } from '@stageflow/pipeline';
import { Clock } from '../clock.adapter';
import { ENGINE_OPTIONS } from '../engine.tokens';
import type { ResolvedEngineOptions } from '../engine.options';
import { StageQueue } from '../queue/stage-queue.adapter';
import type { PlanAction, PlanDeps } from '../scheduling/run-plan';
import { planAdvance } from '../scheduling/run.scheduler';
import { schemaMismatch, SchemaCheck } from '../schema/schema.check';
import { STAGE_FIELDS } from '../store/record.codec';
import { PlanState, RunStore } from '../store/run.store';
import { CancelBus } from './cancel.bus';
import { expectRun, expectStage, transitionRun, transitionStage } from './transitions';

/** Plans a run rarely conflict (only when a runner changes a stage mid-plan); a few re-plans settle it. */
const MAX_REPLANS = 5;

/**
 * Moves a run forward: under the run's mutex, reads its state, asks the
 * scheduler what happens next, writes that atomically, then enqueues the
 * stage jobs and signals kills. Called whenever something a plan depends on
 * changed (run started, stage ended, gate answered).
 */
@Injectable()
export class RunAdvancer {
  private readonly logger = new Logger('RunAdvancer');
  private readonly deps: PlanDeps;

  constructor(
    private readonly store: RunStore,
    private readonly keys: RedisKeys,
    private readonly queue: StageQueue,
    private readonly cancelBus: CancelBus,
    private readonly clock: Clock,
    @Inject(ENGINE_OPTIONS) private readonly options: ResolvedEngineOptions,
    schemas: SchemaCheck,
  ) {
    this.deps = {
      evaluate: evaluateCondition,
      checkInput: (stage: StageDefinition, input: unknown) => {
        if (stage.inputSchema === undefined) return undefined;
        const problems = schemas.problems(stage.inputSchema, input);
        return problems.length ? schemaMismatch('input', problems) : undefined;
      },
    };
  }

  /**
   * Takes the run's mutex, plans and commits. The hot path of every stage end,
   * so it costs two round trips plus the job add: the mutex is taken by the
   * load script and released by the commit script.
   */
  async advance(runId: string): Promise<void> {
    const token = randomBytes(8).toString('hex');
    const lockKey = this.keys.runAdvanceLock(runId);
    let state = await this.acquireAndLoad(runId, token);
    let released = false;
    try {
      for (let round = 0; round < MAX_REPLANS; round++) {
        if (!state || isTerminalRunState(state.runState)) return;
        const actions = planAdvance(state.pipeline, state, this.deps);
        if (!actions.length) return;
        const applied = await this.apply(runId, state, actions, { key: lockKey, token });
        if (applied) {
          released = true;
          return;
        }
        state = await this.loadUnlocked(runId);
      }
      this.warnUnsettled(runId);
    } finally {
      if (!released) await this.store.release(lockKey, token);
    }
  }

  /** The same, for a caller that already holds the run's mutex (gate answers, the sweeper). */
  async advanceLocked(runId: string): Promise<void> {
    for (let round = 0; round < MAX_REPLANS; round++) {
      const state = await this.loadUnlocked(runId);
      if (!state || isTerminalRunState(state.runState)) return;
      const actions = planAdvance(state.pipeline, state, this.deps);
      if (!actions.length) return;
      if (await this.apply(runId, state, actions)) return;
    }
    this.warnUnsettled(runId);
  }

  private async acquireAndLoad(runId: string, token: string): Promise<PlanState | undefined> {
    const deadline = Date.now() + this.options.advanceLockMs * 4;
    let pause = 1;
    for (;;) {
      const state = await this.store.loadPlanState(runId, { token });
      if (state !== 'locked') return state;
      if (Date.now() > deadline) {
        throw new Error(`could not take the advance mutex of run ${runId}; another process holds it`);
      }
      await this.clock.sleep(pause);
      pause = Math.min(pause * 2, 25);
    }
  }

  private async loadUnlocked(runId: string): Promise<PlanState | undefined> {
    const state = await this.store.loadPlanState(runId);
    return state === 'locked' ? undefined : state;
  }

  private warnUnsettled(runId: string): void {
    this.logger.warn({ runId, msg: `run did not settle after ${MAX_REPLANS} plans; the next stage event retries` });
  }

  /** Writes a plan; false when a stage changed under it (the caller re-plans). */
  private async apply(
    runId: string,
    state: PlanState,
    actions: readonly PlanAction[],
    release?: { key: string; token: string },
  ): Promise<boolean> {
    const commit = this.store.newCommit(runId);
    const jobs: StageJobPayload[] = [];
    let kill = false;
    for (const action of actions) {
      if (action.type === 'run-state') {
        const expect = action.state === 'running' ? [expectRun.in('waiting')] : [expectRun.open()];
        transitionRun(commit, this.keys, { expect, state: action.state, reason: action.reason });
        continue;
      }
      const attempt = state.stages[action.stageId]?.attempt ?? 0;
      switch (action.type) {
        case 'stage-ready':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.in('pending')],
            state: 'ready',
            attempt,
            fields: { [STAGE_FIELDS.input]: JSON.stringify(action.input ?? null) },
          });
          break;
        case 'stage-skipped':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.in('pending')],
            state: 'skipped',
            attempt,
            reason: action.reason,
          });
          break;
        case 'stage-failed':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.in('pending')],
            state: 'failed',
            attempt,
            reason: action.reason,
          });
          break;
        case 'stage-queued':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.in('ready')],
            state: 'queued',
            attempt: action.attempt,
          });
          jobs.push({ runId, stageId: action.stageId, attempt: action.attempt });
          break;
        case 'gate-opened':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.in('ready')],
            state: 'waiting',
            attempt: Math.max(attempt, 1),
            reason: `waiting for an operator at gate: ${action.message}`,
            fields: { [STAGE_FIELDS.gate]: JSON.stringify({ message: action.message }) },
          });
          commit.event('gate.opened', { message: action.message }, action.stageId);
          break;
        case 'stage-cancelled':
          transitionStage(commit, this.keys, action.stageId, {
            expect: [expectStage.open()],
            soft: true,
            state: 'cancelled',
            attempt,
            reason: action.reason,
          });
          kill ||= action.wasActive;
          break;
      }
    }
    commit.markOn(this.keys.run(runId));
    if (release) commit.releaseLock(release.key, release.token);
    const result = await this.store.commit(commit);
    if (result.status === 'conflict') return false;
    if (jobs.length) await this.enqueue(runId, await this.withLeaseWakes(runId, state, jobs));
    if (kill) await this.cancelBus.publish(runId);
    return true;
  }

  /**
   * A stage that waited for its browser profile's lease is queued again under
   * a new job id (StageJobPayload.wake); only stages with a profile can have one.
   */
  private async withLeaseWakes(runId: string, state: PlanState, jobs: StageJobPayload[]): Promise<StageJobPayload[]> {
    return Promise.all(
      jobs.map(async (job) => {
        const definition = state.pipeline.stages.find((s) => s.id === job.stageId);
        if (!isQueuedStage(definition) || !definition.browser?.profile) return job;
        const [wakes] = await this.store.stageFields(runId, job.stageId, [STAGE_FIELDS.leaseWakes]);
        return wakes ? { ...job, wake: Number(wakes) } : job;
      }),
    );
  }

  /**
   * Adds stage jobs after their stages were recorded as queued. Should this
   * fail for good, the stage is queued without a job and the abandoned-run
   * sweeper ends the run (docs/run-engine.md).
   */
  async enqueue(runId: string, jobs: readonly StageJobPayload[]): Promise<void> {
    try {
      await this.store.retrying('enqueue', () => this.queue.add(jobs));
    } catch (error) {
      this.logger.error({ runId, msg: `could not enqueue stage jobs: ${(error as Error).message}` });
    }
  }
}
