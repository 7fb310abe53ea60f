import { Injectable, Logger } from '@nestjs/common';
import {
  isTerminalRunState,
  LoginGateInfo,
  StageRecord,
  RedisKeys,
  RunState,
  StageEnvelope,
  StageJobPayload,
  StageState,
} from '@stageflow/contracts';
import { isQueuedStage, type BrowserCheck, type QueuedStageDefinition } from '@stageflow/pipeline';
import { pipelineGraph } from '../scheduling/pipeline.graph';
import { parseJson, RUN_FIELDS, STAGE_FIELDS } from '../store/record.codec';
import { RunStore } from '../store/run.store';
import { mayHoldLease } from './lease-liveness.rule';
import { RunAdvancer } from './run-advancer.service';
import { expectRun, expectStage, transitionRun, transitionStage } from './transitions';

/** What a runner should do with a stage job it picked. */
export type Claim =
  | {
      outcome: 'run';
      stage: QueuedStageDefinition;
      input: unknown;
      attempt: number;
      maxAttempts: number;
      /** A human login gate's record: with an accepted answer, this job is the check after Accept. */
      gate?: StageRecord['gate'];
    }
  /**
   * The attempt was already running: the runner that had it is gone (BullMQ
   * handed the job back). Its process group, if recorded, is named so a runner
   * on the same host can kill it. Call {@link StageAttempts.recordLost}.
   */
  | { outcome: 'lost'; pid?: number; pidStart?: string; host?: string }
  /** Nothing to do (stale attempt, stage or run already ended, duplicate delivery). */
  | { outcome: 'drop'; reason: string };

/** How an attempt ended, as the runner saw it. */
export interface AttemptResult {
  state: Extract<StageState, 'success' | 'failed' | 'timed_out' | 'cancelled'>;
  envelope?: StageEnvelope;
  /** In words, for failures: "exited with code 2", "output does not match output_schema: /x must be string". */
  reason?: string;
  logTail?: readonly string[];
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
}

/**
 * The runner's side of a stage attempt: claim it, record its process, stream
 * its logs, record how it ended. Every write is compare-and-set on
 * (state, attempt), so a job BullMQ delivers twice, or an attempt that was
 * cancelled or taken over meanwhile, can never record a second outcome.
 */
@Injectable()
export class StageAttempts {
  private readonly logger = new Logger('StageAttempts');

  constructor(
    private readonly store: RunStore,
    private readonly keys: RedisKeys,
    private readonly advancer: RunAdvancer,
  ) {}

  /** The browser profile the job's stage needs (`browser.profile`), if any; read before {@link claim}. */
  async leaseProfile(job: StageJobPayload): Promise<string | undefined> {
    const snapshot = await this.store.snapshot(job.runId);
    const definition = snapshot?.pipeline.stages.find((s) => s.id === job.stageId);
    return isQueuedStage(definition) ? definition.browser?.profile : undefined;
  }

  /** Every browser profile the run's stages need. */
  async leaseProfiles(runId: string): Promise<string[]> {
    const snapshot = await this.store.snapshot(runId);
    const profiles = (snapshot?.pipeline.stages ?? []).map((s) => (isQueuedStage(s) ? s.browser?.profile : undefined));
    return [...new Set(profiles.filter((p): p is string => !!p))];
  }

  /** The run's login check for a profile: the `browser.check` of its first stage on that profile that has one. */
  async loginCheckFor(runId: string, profile: string): Promise<BrowserCheck | undefined> {
    const snapshot = await this.store.snapshot(runId);
    return snapshot?.pipeline.stages.find((s) => s.browser?.profile === profile && s.browser.check)?.browser?.check;
  }

  /** False once the run ended or is gone (a grant to it is handed on). */
  async isRunOpen(runId: string): Promise<boolean> {
    const state = await this.store.runState(runId);
    return !!state && !isTerminalRunState(state as RunState);
  }

  /**
   * `isRunAlive` for `ProfileLeases`' reclaim while waiting: open, or ended
   * so recently that browser-host may still be closing its Chrome.
   */
  async mayHoldLease(runId: string): Promise<boolean> {
    const [state, endedAt] = await this.store.runFields(runId, [RUN_FIELDS.state, RUN_FIELDS.endedAt]);
    return mayHoldLease((state ?? undefined) as RunState | undefined, endedAt ?? undefined, Date.now());
  }

  /**
   * queued → waiting: the run is queued for the stage's browser profile. The
   * stage gives its active-stage slot back (the run advances, so a stage of
   * the run without a profile may take it) and has no job and no time limit
   * until {@link wakeLeaseWaiters}. 'stale' when the attempt was no longer queued.
   */
  async parkForLease(job: StageJobPayload, profile: string, reason: string): Promise<'parked' | 'stale'> {
    const stageKey = this.keys.stage(job.runId, job.stageId);
    const commit = this.store.newCommit(job.runId);
    transitionStage(commit, this.keys, job.stageId, {
      expect: [expectStage.in('queued'), expectStage.attempt(job.attempt)],
      state: 'waiting',
      attempt: job.attempt,
      reason,
      fields: { [STAGE_FIELDS.leaseProfile]: profile, [STAGE_FIELDS.missingJobChecks]: undefined },
    });
    commit.hash(this.keys.run(job.runId), { expect: [expectRun.open()] });
    commit.markOn(stageKey);
    if ((await this.store.commit(commit)).status === 'conflict') return 'stale';
    await this.advancer.advance(job.runId);
    return 'parked';
  }

  /**
   * waiting → ready for the run's stages parked for `profile` (its lease was
   * granted), then advances the run, which queues them as slots allow, at the
   * attempt they were parked at. Idempotent: every runner hears every grant,
   * and only the first moves a stage (compare-and-set). Returns the stages moved.
   */
  async wakeLeaseWaiters(runId: string, profile: string): Promise<string[]> {
    const snapshot = await this.store.snapshot(runId);
    if (!snapshot) return [];
    const woken: string[] = [];
    for (const stage of snapshot.pipeline.stages) {
      if (!isQueuedStage(stage) || stage.browser?.profile !== profile) continue;
      const [attempt, wakes] = await this.store.stageFields(runId, stage.id, [STAGE_FIELDS.attempt, STAGE_FIELDS.leaseWakes]);
      const commit = this.store.newCommit(runId);
      transitionStage(commit, this.keys, stage.id, {
        expect: [
          expectStage.in('waiting'),
          { field: STAGE_FIELDS.leaseProfile, in: [profile] },
          expectStage.attempt(Number(attempt)),
          expectStage.wake(wakes ? Number(wakes) : undefined),
        ],
        state: 'ready',
        attempt: Number(attempt),
        // The next job of this attempt gets a new id (StageJobPayload.wake):
        // the parked job may still be finishing under the old one.
        fields: { [STAGE_FIELDS.leaseProfile]: undefined, [STAGE_FIELDS.leaseWakes]: Number(wakes ?? 0) + 1 },
      });
      commit.markOn(this.keys.stage(runId, stage.id));
      if ((await this.store.commit(commit)).status !== 'conflict') woken.push(stage.id);
    }
    if (woken.length) await this.advancer.advance(runId);
    return woken;
  }

  /** queued → running for this attempt (and the run queued → running), or says why not. */
  async claim(job: StageJobPayload, host: string): Promise<Claim> {
    const snapshot = await this.store.snapshot(job.runId);
    if (!snapshot) return { outcome: 'drop', reason: 'the run does not exist' };
    const definition = snapshot.pipeline.stages.find((s) => s.id === job.stageId);
    if (!definition) return { outcome: 'drop', reason: 'the run has no such stage' };
    if (!isQueuedStage(definition)) return { outcome: 'drop', reason: `a ${(definition as { kind: string }).kind} stage has no job` };

    const stageKey = this.keys.stage(job.runId, job.stageId);
    const commit = this.store.newCommit(job.runId);
    transitionStage(commit, this.keys, job.stageId, {
      expect: [expectStage.in('queued'), expectStage.attempt(job.attempt), expectStage.wake(job.wake)],
      state: 'running',
      attempt: job.attempt,
      fields: {
        [STAGE_FIELDS.startedAt]: commit.at,
        [STAGE_FIELDS.host]: host,
        [STAGE_FIELDS.pid]: undefined,
        [STAGE_FIELDS.pidStart]: undefined,
        [STAGE_FIELDS.missingJobChecks]: undefined,
      },
    });
    commit.hash(this.keys.run(job.runId), { expect: [expectRun.open()] });
    transitionRun(commit, this.keys, { expect: [expectRun.in('queued')], soft: true, state: 'running' });
    commit.markOn(stageKey);
    const [result, [input, maxAttempts, gate]] = await this.store.commitThenRead(commit, stageKey, [
      STAGE_FIELDS.input,
      STAGE_FIELDS.maxAttempts,
      STAGE_FIELDS.gate,
    ]);
    if (result.status !== 'conflict') {
      const gateRecord = parseJson<StageRecord['gate'] | null>(gate, null);
      return {
        outcome: 'run',
        stage: definition,
        input: parseJson(input, null),
        attempt: job.attempt,
        maxAttempts: Number(maxAttempts ?? 1),
        ...(gateRecord ? { gate: gateRecord } : {}),
      };
    }
    return this.whyNotClaimed(job);
  }

  /** Stores the attempt's process group; false when the attempt is no longer current (kill it). */
  async recordProcess(job: StageJobPayload, pid: number, pidStart: string | undefined): Promise<boolean> {
    const commit = this.store.newCommit(job.runId);
    commit.hash(this.keys.stage(job.runId, job.stageId), {
      expect: [expectStage.in('running'), expectStage.attempt(job.attempt)],
      set: { [STAGE_FIELDS.pid]: pid, [STAGE_FIELDS.pidStart]: pidStart },
    });
    return (await this.store.commit(commit)).status !== 'conflict';
  }

  /** True while the stage is running this attempt (a runner polls this to notice cancels it missed). */
  async isCurrent(job: StageJobPayload): Promise<boolean> {
    const [state, attempt] = await this.store.stageFields(job.runId, job.stageId, [
      STAGE_FIELDS.state,
      STAGE_FIELDS.attempt,
    ]);
    return state === 'running' && Number(attempt) === job.attempt;
  }

  /** Appends log events (and refreshes the stage's log tail) while the attempt is current. */
  async appendLogs(job: StageJobPayload, lines: readonly LogLine[], tail: readonly string[]): Promise<void> {
    if (!lines.length) return;
    const commit = this.store.newCommit(job.runId);
    const stageKey = this.keys.stage(job.runId, job.stageId);
    const op = commit.hash(stageKey, {
      soft: true,
      expect: [expectStage.in('running'), expectStage.attempt(job.attempt)],
      set: { [STAGE_FIELDS.logTail]: JSON.stringify(tail) },
    });
    for (const line of lines) commit.event('stage.log', line, job.stageId, op);
    commit.markOn(stageKey);
    await this.store.commit(commit);
  }

  /**
   * Records how an attempt ended. A failed or timed-out attempt with attempts
   * left is re-queued as the next attempt (the engine, not BullMQ, retries);
   * otherwise the stage ends and the run advances. 'stale' when the attempt
   * was no longer running (cancelled, taken over, already recorded).
   */
  /**
   * A human login gate's first job opened the browser: running → waiting for the
   * operator (no slot, no worker, no time limit), with the hand-off stored on the
   * gate and sent in `gate.opened`. 'stale' when the attempt was no longer running.
   */
  async openLoginGate(job: StageJobPayload, message: string, login: LoginGateInfo): Promise<'opened' | 'stale'> {
    const commit = this.store.newCommit(job.runId);
    transitionStage(commit, this.keys, job.stageId, {
      expect: [expectStage.in('running'), expectStage.attempt(job.attempt)],
      state: 'waiting',
      attempt: job.attempt,
      reason: `waiting for an operator to log in (${login.handoff === 'live_view' ? 'live view in the console' : 'browser window on the Host'}): ${message}`,
      fields: { [STAGE_FIELDS.gate]: JSON.stringify({ message, login }), [STAGE_FIELDS.pid]: undefined, [STAGE_FIELDS.pidStart]: undefined },
    });
    commit.event('gate.opened', { message, login }, job.stageId);
    commit.hash(this.keys.run(job.runId), { expect: [expectRun.open()] });
    commit.markOn(this.keys.stage(job.runId, job.stageId));
    if ((await this.store.commit(commit)).status === 'conflict') return 'stale';
    await this.advancer.advance(job.runId);
    return 'opened';
  }

  /**
   * The check after Accept still found the profile logged out: the login gate
   * runs again as a new attempt (a new browser tab and a new gate), whatever its
   * `retries` say; the operator can always Reject.
   */
  async repeatLoginGate(job: StageJobPayload, reason: string): Promise<'repeated' | 'stale'> {
    const next = job.attempt + 1;
    const commit = this.store.newCommit(job.runId);
    transitionStage(commit, this.keys, job.stageId, {
      expect: [expectStage.in('running'), expectStage.attempt(job.attempt)],
      state: 'ready',
      attempt: next,
      reason,
      fields: {
        [STAGE_FIELDS.gate]: undefined,
        [STAGE_FIELDS.pid]: undefined,
        [STAGE_FIELDS.pidStart]: undefined,
      },
    });
    commit.hash(this.keys.run(job.runId), { expect: [expectRun.open()] });
    commit.markOn(this.keys.stage(job.runId, job.stageId));
    if ((await this.store.commit(commit)).status === 'conflict') return 'stale';
    await this.advancer.advance(job.runId);
    return 'repeated';
  }

  async finish(job: StageJobPayload, result: AttemptResult): Promise<'recorded' | 'stale'> {
    return this.end(job, result, ['running']);
  }

  /**
   * The attempt's runner is gone (killed, or BullMQ failed its job as stalled):
   * records it as failed with `reason` and retries if attempts remain.
   */
  async recordLost(job: StageJobPayload, reason: string): Promise<'recorded' | 'stale'> {
    return this.end(job, { state: 'failed', reason }, ['running', 'queued']);
  }

  private async end(
    job: StageJobPayload,
    result: AttemptResult,
    from: StageState[],
  ): Promise<'recorded' | 'stale'> {
    const snapshot = await this.store.snapshot(job.runId);
    if (!snapshot) return 'stale';
    const definition = pipelineGraph(snapshot.pipeline).stage(job.stageId);
    const maxAttempts = definition.retries + 1;
    const retry = (result.state === 'failed' || result.state === 'timed_out') && job.attempt < maxAttempts;
    const stageKey = this.keys.stage(job.runId, job.stageId);
    const commit = this.store.newCommit(job.runId);
    if (result.envelope) commit.event('stage.output', { envelope: result.envelope }, job.stageId);
    const fields = {
      ...(result.envelope ? { [STAGE_FIELDS.envelope]: JSON.stringify(result.envelope) } : {}),
      ...(result.logTail ? { [STAGE_FIELDS.logTail]: JSON.stringify(result.logTail) } : {}),
      [STAGE_FIELDS.pid]: undefined,
      [STAGE_FIELDS.pidStart]: undefined,
    };
    const expect = [expectStage.in(...from), expectStage.attempt(job.attempt)];
    if (retry) {
      const next = job.attempt + 1;
      const why = result.state === 'timed_out' ? 'timed out' : (result.reason ?? 'failed');
      transitionStage(commit, this.keys, job.stageId, {
        expect,
        state: 'queued',
        attempt: next,
        reason: `${why}; retrying, attempt ${next} of ${maxAttempts}`,
        fields,
      });
    } else {
      transitionStage(commit, this.keys, job.stageId, {
        expect,
        state: result.state,
        attempt: job.attempt,
        reason: result.reason,
        fields,
      });
    }
    commit.markOn(stageKey);
    const outcome = await this.store.commit(commit);
    if (outcome.status === 'conflict') {
      this.logger.log({ runId: job.runId, stageId: job.stageId, msg: `attempt ${job.attempt} was no longer running; its end is not recorded` });
      return 'stale';
    }
    if (retry) await this.advancer.enqueue(job.runId, [{ ...job, attempt: job.attempt + 1 }]);
    else await this.advancer.advance(job.runId);
    return 'recorded';
  }

  private async whyNotClaimed(job: StageJobPayload): Promise<Claim> {
    const [[state, attempt, pid, pidStart, host, wakes], runState] = await Promise.all([
      this.store.stageFields(job.runId, job.stageId, [
        STAGE_FIELDS.state,
        STAGE_FIELDS.attempt,
        STAGE_FIELDS.pid,
        STAGE_FIELDS.pidStart,
        STAGE_FIELDS.host,
        STAGE_FIELDS.leaseWakes,
      ]),
      this.store.runState(job.runId),
    ]);
    if (!runState) return { outcome: 'drop', reason: 'the run does not exist' };
    if (isTerminalRunState(runState as RunState)) return { outcome: 'drop', reason: `the run is ${runState}` };
    if (Number(attempt) !== job.attempt) {
      return { outcome: 'drop', reason: `stale job: the stage is at attempt ${attempt}` };
    }
    if (Number(wakes ?? 0) !== (job.wake ?? 0)) {
      return { outcome: 'drop', reason: `stale job: the stage was woken from a lease wait since (wake ${wakes ?? 0})` };
    }
    if (state === 'running') {
      return {
        outcome: 'lost',
        ...(pid ? { pid: Number(pid) } : {}),
        ...(pidStart ? { pidStart } : {}),
        ...(host ? { host } : {}),
      };
    }
    return { outcome: 'drop', reason: `the stage is ${state}` };
  }
}
