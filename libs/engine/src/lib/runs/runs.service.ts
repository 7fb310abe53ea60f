import { Injectable } from '@nestjs/common';
import {
  ConflictError,
  GateAnswer,
  isTerminalRunState,
  isTerminalStageState,
  NotFoundError,
  RedisKeys,
  RunEvent,
  RunRecord,
  StageRecord,
  StageflowError,
} from '@stageflow/contracts';
import type {
  GateDecision,
  ListRunsQuery,
  RunPage,
  RunsApi,
  RunView,
  StartRunRequest,
} from '../engine.api';
import { isLoginGate, type StageDefinition } from '@stageflow/pipeline';
import { Clock } from '../clock.adapter';
import type { Commit } from '../store/commit';
import { RUN_FIELDS, STAGE_FIELDS } from '../store/record.codec';
import { RunStore } from '../store/run.store';
import { CancelBus } from './cancel.bus';
import { RunAdvancer } from './run-advancer.service';
import { newRunId } from './run-id';
import { edgeViews, stageViews } from './run-view';
import { expectRun, expectStage, transitionRun, transitionStage } from './transitions';

/** Index entries scanned at most per page when filtering, so one request stays cheap. */
const MAX_SCAN_PER_PAGE = 2000;
const SCAN_BATCH = 200;

/** The engine's runs port for the api: start, read, list, cancel, answer gates, read history. */
@Injectable()
export class RunsService implements RunsApi {
  constructor(
    private readonly store: RunStore,
    private readonly keys: RedisKeys,
    private readonly advancer: RunAdvancer,
    private readonly cancelBus: CancelBus,
    private readonly clock: Clock,
  ) {}

  async startRun(req: StartRunRequest): Promise<RunView> {
    const { pipeline } = req;
    const now = this.clock.now();
    const runId = newRunId(now.getTime());
    const commit = this.store.newCommit(runId);
    const input = req.input === undefined ? null : req.input;
    commit.hash(this.keys.run(runId), {
      expect: [{ field: RUN_FIELDS.id, nin: [runId] }],
      set: {
        [RUN_FIELDS.id]: runId,
        [RUN_FIELDS.pipeline]: pipeline.name,
        [RUN_FIELDS.state]: 'queued',
        [RUN_FIELDS.input]: JSON.stringify(input),
        [RUN_FIELDS.createdAt]: commit.at,
        [RUN_FIELDS.updatedAt]: commit.at,
        [RUN_FIELDS.maxActiveStages]: pipeline.maxActiveStages,
        [RUN_FIELDS.snapshot]: JSON.stringify(pipeline),
      },
    });
    for (const stage of pipeline.stages) {
      commit.hash(this.keys.stage(runId, stage.id), {
        set: {
          [STAGE_FIELDS.runId]: runId,
          [STAGE_FIELDS.id]: stage.id,
          [STAGE_FIELDS.kind]: stage.kind,
          [STAGE_FIELDS.state]: 'pending',
          [STAGE_FIELDS.attempt]: 0,
          [STAGE_FIELDS.maxAttempts]: stage.kind === 'gate' ? 1 : stage.retries + 1,
          [STAGE_FIELDS.logTail]: '[]',
        },
      });
    }
    commit.zadd(this.keys.runsIndex(), now.getTime(), runId);
    commit.sadd(this.keys.activeRuns(), runId);
    commit.event('run.created', { pipeline: pipeline.name, stages: pipeline.stages.map((s) => s.id) });
    commit.event('run.state', { state: 'queued' });
    commit.markOn(this.keys.run(runId));
    await this.store.commit(commit);
    this.store.rememberSnapshot(runId, { pipeline, input, maxActiveStages: pipeline.maxActiveStages });
    await this.advancer.advance(runId);
    return this.getRun(runId);
  }

  async getRun(runId: string): Promise<RunView> {
    const [run, snapshot] = await Promise.all([this.store.readRun(runId), this.store.snapshot(runId)]);
    if (!run || !snapshot) throw runNotFound(runId);
    const stages = await this.store.readStages(runId, snapshot.pipeline);
    return { ...run, stages: stageViews(stages, snapshot.pipeline), edges: edgeViews(snapshot.pipeline) };
  }

  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    const limit = Math.min(Math.max(Math.trunc(query.limit), 1), 100);
    const after = query.cursor ? decodeCursor(query.cursor) : undefined;
    const maxScore = after ? String(after.score) : '+inf';
    const items: RunRecord[] = [];
    let offset = 0;
    let scanned = 0;
    let last: { id: string; score: number } | undefined;
    for (;;) {
      const page = await this.store.runIndexPage(maxScore, offset, SCAN_BATCH);
      offset += page.length;
      // Entries with the cursor's score sort by id, descending: the ones at or
      // above the cursor's id were on earlier pages.
      const fresh = page.filter((e) => !after || e.score < after.score || e.id < after.id);
      const runs = await this.store.readRuns(fresh.map((e) => e.id));
      for (let i = 0; i < fresh.length; i++) {
        scanned++;
        last = fresh[i];
        const run = runs[i];
        if (!run || (query.state && run.state !== query.state) || (query.pipeline && run.pipeline !== query.pipeline)) {
          continue;
        }
        items.push(run);
        if (items.length === limit) {
          const more = i < fresh.length - 1 || page.length === SCAN_BATCH;
          return { items, ...(more ? { next: encodeCursor(last) } : {}) };
        }
      }
      if (page.length < SCAN_BATCH) return { items };
      if (scanned >= MAX_SCAN_PER_PAGE && last) return { items, next: encodeCursor(last) };
    }
  }

  async cancelRun(runId: string): Promise<RunView> {
    await this.store.withRunLock(runId, async () => {
      const [run, snapshot] = await Promise.all([this.store.readRun(runId), this.store.snapshot(runId)]);
      if (!run || !snapshot) throw runNotFound(runId);
      if (isTerminalRunState(run.state)) throw runFinished(runId, run.state);
      const stages = await this.store.readStages(runId, snapshot.pipeline);
      const commit = this.store.newCommit(runId);
      transitionRun(commit, this.keys, { expect: [expectRun.open()], state: 'cancelled', reason: 'cancelled by an operator' });
      for (const stage of stages) {
        if (isTerminalStageState(stage.state)) continue;
        transitionStage(commit, this.keys, stage.id, {
          expect: [expectStage.open()],
          soft: true,
          state: 'cancelled',
          attempt: stage.attempt,
          reason: 'run cancelled by an operator',
        });
      }
      commit.markOn(this.keys.run(runId));
      const result = await this.store.commit(commit);
      if (result.status === 'conflict') throw runFinished(runId, (await this.store.runState(runId)) ?? 'ended');
    });
    await this.cancelBus.publish(runId);
    return this.getRun(runId);
  }

  async getStage(runId: string, stageId: string): Promise<StageRecord> {
    const stage = await this.store.readStage(runId, stageId);
    if (stage) return stage;
    if (!(await this.store.runState(runId))) throw runNotFound(runId);
    throw new NotFoundError('stage_not_found', `Run "${runId}" has no stage "${stageId}".`);
  }

  async answerGate(runId: string, stageId: string, decision: GateDecision): Promise<StageRecord> {
    await this.store.withRunLock(runId, async () => {
      const stage = await this.getStage(runId, stageId);
      if (stage.kind !== 'gate') {
        throw new ConflictError('not_a_gate', `Stage "${stageId}" is a ${stage.kind} stage, not a gate; only gates take answers.`);
      }
      const runState = await this.store.runState(runId);
      if (runState && isTerminalRunState(runState)) throw runFinished(runId, runState);
      if (stage.state !== 'waiting') {
        throw new ConflictError(
          'gate_not_waiting',
          `Gate "${stageId}" is ${stage.state}, not waiting for an answer` +
            (stage.gate?.answer ? ' (it was already answered).' : '.'),
          { state: stage.state },
        );
      }
      const commit = this.store.newCommit(runId);
      const accepted = decision.decision === 'accept';
      const note = decision.note;
      const answer = { decision: decision.decision, ...(note !== undefined ? { note } : {}), at: commit.at };
      if (accepted && isLoginGate(await this.definitionOf(runId, stageId))) {
        await this.acceptLoginGate(commit, stage, answer);
        return;
      }
      const envelope = {
        ok: accepted,
        stage: stageId,
        attempt: stage.attempt,
        output: accepted ? { decision: decision.decision, ...(note !== undefined ? { note } : {}) } : {},
        artifacts: [],
        durationMs: stage.startedAt ? Date.parse(commit.at) - Date.parse(stage.startedAt) : 0,
        ...(accepted ? {} : { error: 'rejected by operator' }),
      };
      commit.event('gate.answered', { decision: decision.decision, ...(note !== undefined ? { note } : {}) }, stageId);
      commit.event('stage.output', { envelope }, stageId);
      transitionStage(commit, this.keys, stageId, {
        expect: [expectStage.in('waiting'), expectStage.attempt(stage.attempt)],
        state: accepted ? 'success' : 'failed',
        attempt: stage.attempt,
        reason: accepted ? undefined : 'rejected by operator',
        fields: {
          [STAGE_FIELDS.envelope]: JSON.stringify(envelope),
          [STAGE_FIELDS.gate]: JSON.stringify({ ...(stage.gate ?? { message: '' }), answer }),
        },
      });
      commit.hash(this.keys.run(runId), { expect: [expectRun.open()] });
      commit.markOn(this.keys.stage(runId, stageId));
      const result = await this.store.commit(commit);
      if (result.status === 'conflict') {
        throw new ConflictError('gate_not_waiting', `Gate "${stageId}" is no longer waiting for an answer.`);
      }
      await this.advancer.advanceLocked(runId);
    });
    return this.getStage(runId, stageId);
  }

  /**
   * Accept on a human login gate: the Host checks the login before the stage
   * succeeds (`verify: browser_login`), so the gate goes back to the queue at the
   * same attempt (waiting → ready; its job gets a new id through `leaseWakes`) and
   * the runner that takes it runs the check.
   */
  private async acceptLoginGate(commit: Commit, stage: StageRecord, answer: GateAnswer): Promise<void> {
    const { runId, id: stageId } = stage;
    const [wakes] = await this.store.stageFields(runId, stageId, [STAGE_FIELDS.leaseWakes]);
    commit.event('gate.answered', { decision: answer.decision, ...(answer.note !== undefined ? { note: answer.note } : {}) }, stageId);
    transitionStage(commit, this.keys, stageId, {
      expect: [expectStage.in('waiting'), expectStage.attempt(stage.attempt), expectStage.wake(wakes ? Number(wakes) : undefined)],
      state: 'ready',
      attempt: stage.attempt,
      reason: 'accepted by the operator; the Host checks the login',
      fields: {
        [STAGE_FIELDS.gate]: JSON.stringify({ ...(stage.gate ?? { message: '' }), answer }),
        [STAGE_FIELDS.leaseWakes]: Number(wakes ?? 0) + 1,
      },
    });
    commit.hash(this.keys.run(runId), { expect: [expectRun.open()] });
    commit.markOn(this.keys.stage(runId, stageId));
    if ((await this.store.commit(commit)).status === 'conflict') {
      throw new ConflictError('gate_not_waiting', `Gate "${stageId}" is no longer waiting for an answer.`);
    }
    await this.advancer.advanceLocked(runId);
  }

  private async definitionOf(runId: string, stageId: string): Promise<StageDefinition | undefined> {
    return (await this.store.snapshot(runId))?.pipeline.stages.find((s) => s.id === stageId);
  }

  async readEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    if (!(await this.store.runState(runId))) throw runNotFound(runId);
    return this.store.readEvents(runId, Math.max(0, Math.trunc(afterSeq)), Math.min(Math.max(limit, 1), 1000));
  }
}

function runNotFound(runId: string): StageflowError {
  return new NotFoundError('run_not_found', `Run "${runId}" does not exist. List runs with GET /api/runs.`);
}

function runFinished(runId: string, state: string): StageflowError {
  return new ConflictError('run_finished', `Run "${runId}" has already ended (${state}); it cannot be changed.`, {
    state,
  });
}

function encodeCursor(entry: { id: string; score: number }): string {
  return Buffer.from(JSON.stringify([entry.score, entry.id])).toString('base64url');
}

function decodeCursor(cursor: string): { score: number; id: string } {
  try {
    const [score, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof score === 'number' && Number.isFinite(score) && typeof id === 'string') return { score, id };
  } catch {
    // fall through to the error below
  }
  throw new StageflowError('cursor_invalid', 'The cursor is not one this server issued; start again without a cursor.');
}
