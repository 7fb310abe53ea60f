import { DynamicModule, Module } from '@nestjs/common';
import {
  ConflictError,
  isTerminalRunState,
  isTerminalStageState,
  NotFoundError,
  StageflowError,
  type RunEvent,
  type RunEventData,
  type RunEventType,
  type RunRecord,
  type RunState,
  type StageRecord,
} from '@stageflow/contracts';
import {
  edgeViews,
  EVENT_TAIL_FACTORY,
  PIPELINES_API,
  RUNS_API,
  type CursorEvent,
  type EventTailApi,
  type EventTailFactory,
  type GateDecision,
  type ListRunsQuery,
  type PipelineEntry,
  type PipelinesApi,
  type RunPage,
  type RunsApi,
  type RunView,
  type StartRunRequest,
  stageViews,
} from '@stageflow/engine';
import type { Pipeline } from '@stageflow/pipeline';

/**
 * In-memory stand-in for the engine's ports, enforcing the same rules and
 * error codes as engine.api.ts documents (run_not_found, stage_not_found,
 * pipeline_not_found, run_finished, gate_not_waiting, not_a_gate). Root gate
 * stages wait for the operator; other root stages are queued (no runner here).
 */
export class FakeEngine implements RunsApi, PipelinesApi {
  private readonly runs = new Map<string, { record: RunRecord; stages: StageRecord[]; events: RunEvent[]; pipeline: Pipeline }>();
  private readonly order: string[] = [];
  private readonly pipelines = new Map<string, PipelineEntry>();
  private readonly allEvents: CursorEvent[] = [];
  private readonly waiters = new Set<() => void>();
  private nextRun = 1;
  private clock = Date.parse('2030-01-01T00:00:00Z');
  /** Tails handed out and not yet closed. */
  openTails = 0;
  /** Set to make every call fail as if Redis were gone (for 5xx tests). */
  failWith?: Error;
  /** Set to make tail reads fail (a WebSocket subscription's Redis connection dropping). */
  failTails?: Error;

  // ---- RunsApi ----

  async startRun(req: StartRunRequest): Promise<RunView> {
    this.check();
    const id = `run-${this.nextRun++}`;
    const now = this.now();
    const record: RunRecord = {
      id,
      pipeline: req.pipeline.name,
      state: 'running',
      input: req.input,
      createdAt: now,
      updatedAt: now,
      maxActiveStages: req.pipeline.maxActiveStages,
    };
    const roots = new Set(req.pipeline.stages.map((s) => s.id));
    for (const edge of req.pipeline.edges) roots.delete(edge.to);
    const stages: StageRecord[] = req.pipeline.stages.map((s) => {
      const root = roots.has(s.id);
      const stage: StageRecord = {
        runId: id,
        id: s.id,
        kind: s.kind,
        state: !root ? 'pending' : s.kind === 'gate' ? 'waiting' : 'queued',
        attempt: root ? 1 : 0,
        maxAttempts: s.retries + 1,
        logTail: [],
      };
      if (s.kind === 'gate') {
        stage.gate = { message: s.message };
        if (root) stage.reason = 'waiting for the operator';
      }
      return stage;
    });
    this.runs.set(id, { record, stages, events: [], pipeline: req.pipeline });
    this.order.unshift(id);
    this.emit(id, undefined, 'run.created', { pipeline: record.pipeline, stages: stages.map((s) => s.id) });
    this.emit(id, undefined, 'run.state', { state: 'running' });
    for (const s of stages) {
      if (s.state === 'waiting') this.emit(id, s.id, 'gate.opened', { message: s.gate?.message ?? '' });
      if (s.state !== 'pending') this.emit(id, s.id, 'stage.state', { state: s.state, attempt: s.attempt });
    }
    return this.view(id);
  }

  async getRun(runId: string): Promise<RunView> {
    this.check();
    return this.view(runId);
  }

  async listRuns(query: ListRunsQuery): Promise<RunPage> {
    this.check();
    if (query.cursor !== undefined && !/^\d{1,9}$/.test(query.cursor)) {
      throw new StageflowError('cursor_invalid', 'The cursor is not one this api handed out: start again without it.', 400);
    }
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    const matching = this.order
      .map((id) => this.runOf(id).record)
      .filter((r) => (query.state === undefined || r.state === query.state) && (query.pipeline === undefined || r.pipeline === query.pipeline));
    const items = matching.slice(start, start + query.limit).map((r) => ({ ...r }));
    const next = start + query.limit < matching.length ? String(start + query.limit) : undefined;
    return next === undefined ? { items } : { items, next };
  }

  async cancelRun(runId: string): Promise<RunView> {
    this.check();
    const run = this.runOf(runId);
    this.assertNotFinished(run.record);
    for (const s of run.stages) {
      if (!isTerminalStageState(s.state)) {
        s.state = 'cancelled';
        this.emit(runId, s.id, 'stage.state', { state: 'cancelled', attempt: s.attempt });
      }
    }
    this.setRunState(runId, 'cancelled', 'cancelled by the operator');
    return this.view(runId);
  }

  async getStage(runId: string, stageId: string): Promise<StageRecord> {
    this.check();
    return structuredClone(this.stage(runId, stageId));
  }

  async answerGate(runId: string, stageId: string, decision: GateDecision): Promise<StageRecord> {
    this.check();
    const run = this.runOf(runId);
    const stage = this.stage(runId, stageId);
    if (stage.kind !== 'gate' || !stage.gate) {
      throw new ConflictError('not_a_gate', `Stage "${stageId}" is not a gate.`);
    }
    this.assertNotFinished(run.record);
    if (stage.state !== 'waiting' || stage.gate.answer) {
      throw new ConflictError('gate_not_waiting', `Gate "${stageId}" is not waiting for an answer (it is ${stage.state}).`);
    }
    stage.gate.answer = { ...decision, at: this.now() };
    stage.state = decision.decision === 'accept' ? 'success' : 'failed';
    delete stage.reason;
    this.emit(runId, stageId, 'gate.answered', decision);
    this.emit(runId, stageId, 'stage.state', { state: stage.state, attempt: stage.attempt });
    if (run.stages.every((s) => isTerminalStageState(s.state))) {
      this.setRunState(runId, run.stages.every((s) => s.state === 'success') ? 'success' : 'failed');
    }
    return structuredClone(stage);
  }

  async readEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]> {
    this.check();
    return structuredClone(this.runOf(runId).events.filter((e) => e.seq > afterSeq).slice(0, limit));
  }

  // ---- PipelinesApi ----

  async register(pipeline: Pipeline, source: string): Promise<PipelineEntry> {
    this.check();
    const entry = { name: pipeline.name, source, updatedAt: this.now(), stages: pipeline.stages.length };
    this.pipelines.set(pipeline.name, entry);
    return { ...entry };
  }

  async list(): Promise<PipelineEntry[]> {
    this.check();
    return [...this.pipelines.values()].sort((a, b) => a.name.localeCompare(b.name)).map((e) => ({ ...e }));
  }

  async get(name: string): Promise<PipelineEntry> {
    this.check();
    const entry = this.pipelines.get(name);
    if (!entry) throw new NotFoundError('pipeline_not_found', `No pipeline "${name}".`);
    return { ...entry };
  }

  // ---- EventTailApi ----

  readonly tailFactory: EventTailFactory = () => {
    this.openTails++;
    let closed = false;
    let allFrom: number | undefined;
    const wait = (blockMs: number, ready: () => boolean): Promise<void> =>
      new Promise((resolve) => {
        if (closed || ready()) return resolve();
        const done = (): void => {
          if (!closed && !ready()) return;
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(() => {
          this.waiters.delete(done);
          resolve();
        }, blockMs);
        this.waiters.add(done);
      });
    const tail: EventTailApi = {
      tailRun: async (runId, afterSeq, blockMs) => {
        const run = this.runOf(runId);
        await wait(blockMs, () => run.events.some((e) => e.seq > afterSeq));
        if (this.failTails && !closed) throw this.failTails;
        return closed ? [] : structuredClone(run.events.filter((e) => e.seq > afterSeq));
      },
      tailAll: async (afterCursor, blockMs) => {
        if (afterCursor === undefined && allFrom === undefined) {
          // Like the engine, "now" is looked up (asynchronously) on the first read.
          await new Promise((resolve) => setTimeout(resolve, 20));
          allFrom = this.allEvents.length;
        }
        const from = afterCursor === undefined ? (allFrom as number) : Number(afterCursor);
        await wait(blockMs, () => this.allEvents.length > from);
        return closed ? [] : structuredClone(this.allEvents.slice(from));
      },
      close: async () => {
        if (closed) return;
        closed = true;
        this.openTails--;
        for (const waiter of [...this.waiters]) waiter();
      },
    };
    return tail;
  };

  // ---- test hooks ----

  /** Ends a run as the engine would when its last stage ends. */
  finishRun(runId: string, state: RunState): void {
    this.setRunState(runId, state);
  }

  /** Appends a log line event, as a running stage would. */
  log(runId: string, stageId: string, line: string): RunEvent {
    return this.emit(runId, stageId, 'stage.log', { stream: 'stdout', line });
  }

  // ---- internals ----

  private runOf(runId: string): { record: RunRecord; stages: StageRecord[]; events: RunEvent[]; pipeline: Pipeline } {
    const run = this.runs.get(runId);
    if (!run) throw new NotFoundError('run_not_found', `No run "${runId}".`);
    return run;
  }

  private view(runId: string): RunView {
    const run = this.runOf(runId);
    return structuredClone({ ...run.record, stages: stageViews(run.stages, run.pipeline), edges: edgeViews(run.pipeline) });
  }

  private stage(runId: string, stageId: string): StageRecord {
    const stage = this.runOf(runId).stages.find((s) => s.id === stageId);
    if (!stage) throw new NotFoundError('stage_not_found', `Run "${runId}" has no stage "${stageId}".`);
    return stage;
  }

  private assertNotFinished(record: RunRecord): void {
    if (isTerminalRunState(record.state)) {
      throw new ConflictError('run_finished', `Run "${record.id}" has ended (${record.state}).`);
    }
  }

  private setRunState(runId: string, state: RunState, reason?: string): void {
    const run = this.runOf(runId);
    run.record.state = state;
    run.record.updatedAt = this.now();
    if (reason) run.record.reason = reason;
    if (isTerminalRunState(state)) run.record.endedAt = run.record.updatedAt;
    this.emit(runId, undefined, 'run.state', reason ? { state, reason } : { state });
  }

  private emit<T extends RunEventType>(runId: string, stageId: string | undefined, type: T, data: RunEventData[T]): RunEvent {
    const run = this.runOf(runId);
    const event: RunEvent = { seq: run.events.length + 1, runId, type, at: this.now(), data };
    if (stageId !== undefined) event.stageId = stageId;
    run.events.push(event);
    this.allEvents.push({ cursor: String(this.allEvents.length + 1), event });
    for (const waiter of [...this.waiters]) waiter();
    return event;
  }

  private now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  private check(): void {
    if (this.failWith) throw this.failWith;
  }
}

/** Provides the engine's three tokens from one {@link FakeEngine}; global, like EngineModule. */
export function fakeEngineModule(engine: FakeEngine): DynamicModule {
  return {
    module: FakeEngineModule,
    global: true,
    providers: [
      { provide: RUNS_API, useValue: engine },
      { provide: PIPELINES_API, useValue: engine },
      { provide: EVENT_TAIL_FACTORY, useValue: engine.tailFactory },
    ],
    exports: [RUNS_API, PIPELINES_API, EVENT_TAIL_FACTORY],
  };
}

@Module({})
export class FakeEngineModule {}
