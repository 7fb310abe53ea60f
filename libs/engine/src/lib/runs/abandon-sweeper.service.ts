import { Injectable, Logger } from '@nestjs/common';
import { isTerminalRunState, isTerminalStageState, RedisKeys } from '@stageflow/contracts';
import { StageQueue } from '../queue/stage-queue.adapter';
import { STAGE_FIELDS } from '../store/record.codec';
import { RunStore } from '../store/run.store';
import { judgeRun, SweptStage } from './abandon.rule';
import { CancelBus } from './cancel.bus';
import { RunAdvancer } from './run-advancer.service';
import { expectRun, expectStage, transitionRun, transitionStage } from './transitions';

export interface SweepReport {
  checked: number;
  abandoned: { runId: string; reason: string }[];
}

/**
 * Finds and ends abandoned runs (rule: {@link judgeRun}). Runners call
 * {@link AbandonSweeper.sweepOnce} on a timer; a Redis lock lets one sweep
 * run at a time across all runners, and the per-stage counters live in Redis,
 * so "consecutive checks" holds whichever runner sweeps.
 */
@Injectable()
export class AbandonSweeper {
  private readonly logger = new Logger('AbandonSweeper');

  constructor(
    private readonly store: RunStore,
    private readonly keys: RedisKeys,
    private readonly queue: StageQueue,
    private readonly advancer: RunAdvancer,
    private readonly cancelBus: CancelBus,
  ) {}

  /** One sweep over the active runs; undefined when another sweeper holds the lock. */
  async sweepOnce(lockTtlMs = 60000): Promise<SweepReport | undefined> {
    const lockKey = this.keys.abandonSweepLock();
    const token = await this.store.tryLock(lockKey, lockTtlMs);
    if (!token) return undefined;
    const report: SweepReport = { checked: 0, abandoned: [] };
    try {
      for (const runId of await this.store.activeRunIds()) {
        report.checked++;
        const reason = await this.sweepRun(runId);
        if (reason) report.abandoned.push({ runId, reason });
      }
    } finally {
      await this.store.release(lockKey, token);
    }
    return report;
  }

  private async sweepRun(runId: string): Promise<string | undefined> {
    const state = await this.store.runState(runId);
    if (!state || isTerminalRunState(state)) {
      await this.store.forgetActive(runId);
      return undefined;
    }
    const snapshot = await this.store.snapshot(runId);
    if (!snapshot) return this.abandon(runId, 'the run record has no pipeline snapshot');
    return this.store.withRunLock(runId, async () => {
      let stages = await this.sweptStages(runId);
      let verdict = judgeRun(stages);
      if (verdict.abandon && !stages.some((s) => s.state === 'queued' || s.state === 'running')) {
        // Maybe only an advance is missing (its writer died between ending a
        // stage and advancing): try it before giving up on the run.
        await this.advancer.advanceLocked(runId);
        const after = await this.store.runState(runId);
        if (!after || isTerminalRunState(after)) return undefined;
        stages = await this.sweptStages(runId);
        verdict = judgeRun(stages);
      }
      for (const stage of stages) {
        const checks = verdict.missingJobChecks[stage.id];
        if (checks === undefined || checks === stage.missingJobChecks) continue;
        await this.store.setStageField(runId, stage.id, STAGE_FIELDS.missingJobChecks, checks ? String(checks) : undefined);
      }
      if (!verdict.abandon) return undefined;
      return this.abandonLocked(runId, verdict.abandon, stages);
    });
  }

  private async sweptStages(runId: string): Promise<SweptStage[]> {
    const snapshot = await this.store.snapshot(runId);
    if (!snapshot) return [];
    const stages: SweptStage[] = [];
    for (const { id } of snapshot.pipeline.stages) {
      const [state, attempt, checks, wakes] = await this.store.stageFields(runId, id, [
        STAGE_FIELDS.state,
        STAGE_FIELDS.attempt,
        STAGE_FIELDS.missingJobChecks,
        STAGE_FIELDS.leaseWakes,
      ]);
      const stage: SweptStage = {
        id,
        state: (state ?? 'pending') as SweptStage['state'],
        attempt: Number(attempt ?? 0),
        missingJobChecks: Number(checks ?? 0),
      };
      if (stage.state === 'queued' || stage.state === 'running') {
        const wake = wakes ? { wake: Number(wakes) } : {};
        stage.jobAlive = await this.queue.isAlive({ runId, stageId: id, attempt: stage.attempt, ...wake });
      }
      stages.push(stage);
    }
    return stages;
  }

  private async abandon(runId: string, reason: string): Promise<string | undefined> {
    return this.store.withRunLock(runId, () => this.abandonLocked(runId, reason, []));
  }

  private async abandonLocked(runId: string, reason: string, stages: readonly SweptStage[]): Promise<string | undefined> {
    const commit = this.store.newCommit(runId);
    transitionRun(commit, this.keys, { expect: [expectRun.open()], state: 'abandoned', reason });
    for (const stage of stages) {
      if (isTerminalStageState(stage.state)) continue;
      transitionStage(commit, this.keys, stage.id, {
        expect: [expectStage.open()],
        soft: true,
        state: 'cancelled',
        attempt: stage.attempt,
        reason: `run abandoned: ${reason}`,
      });
    }
    commit.markOn(this.keys.run(runId));
    const result = await this.store.commit(commit);
    if (result.status === 'conflict') return undefined;
    this.logger.warn({ runId, msg: `run abandoned: ${reason}` });
    await this.cancelBus.publish(runId);
    return reason;
  }
}
