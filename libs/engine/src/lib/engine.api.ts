import type { RunEvent, RunRecord, RunState, StageRecord } from '@stageflow/contracts';
import type { Pipeline } from '@stageflow/pipeline';

/**
 * What the api (and tests) ask of the engine. Implemented by the engine's
 * Nest providers; the api depends on these shapes only.
 */

/**
 * A run as clients read it: the record, its stages with what the run's
 * pipeline snapshot says about each (so a client can draw and label them
 * without the YAML), and the snapshot's edges.
 */
export interface RunView extends RunRecord {
  stages: RunStageView[];
  /** The edges of the pipeline this run follows, in pipeline order. */
  edges: RunEdgeView[];
}

/** A stage record plus the parts of its definition a client shows. */
export interface RunStageView extends StageRecord {
  description?: string;
  /** Present on stages with a `browser:` block; `profile` absent = a throw-away browser. */
  browser?: { profile?: string; headed: boolean };
  /** `browser_login` on a human login gate. */
  verify?: 'browser_login';
}

export interface RunEdgeView {
  from: string;
  to: string;
  /** The condition's source text, as written in the YAML. */
  if?: string;
}

export interface StartRunRequest {
  /** The validated pipeline to run (a snapshot is stored with the run). */
  pipeline: Pipeline;
  /** The run's input; root stages receive it. */
  input: unknown;
}

export interface ListRunsQuery {
  state?: RunState;
  pipeline?: string;
  /** 1..100 */
  limit: number;
  /** Opaque cursor from a previous page's `next`. */
  cursor?: string;
}

export interface RunPage {
  items: RunRecord[];
  next?: string;
}

export interface GateDecision {
  decision: 'accept' | 'reject';
  note?: string;
}

/** A registered pipeline: its YAML as sent, and when it was registered. */
export interface PipelineEntry {
  name: string;
  source: string;
  updatedAt: string;
  stages: number;
}

/** One event of the all-runs stream: `cursor` resumes after it. */
export interface CursorEvent {
  cursor: string;
  event: RunEvent;
}

/**
 * Errors (all `StageflowError` from contracts, with these codes):
 * `run_not_found` 404, `stage_not_found` 404, `pipeline_not_found` 404,
 * `run_finished` 409 (cancel or gate on an ended run), `gate_not_waiting` 409
 * (answered twice, or not yet reached), `not_a_gate` 409.
 */
export interface RunsApi {
  startRun(req: StartRunRequest): Promise<RunView>;
  getRun(runId: string): Promise<RunView>;
  listRuns(query: ListRunsQuery): Promise<RunPage>;
  cancelRun(runId: string): Promise<RunView>;
  getStage(runId: string, stageId: string): Promise<StageRecord>;
  answerGate(runId: string, stageId: string, decision: GateDecision): Promise<StageRecord>;
  /** History after `afterSeq` (0 = from the start), at most `limit` events, oldest first. */
  readEvents(runId: string, afterSeq: number, limit: number): Promise<RunEvent[]>;
}

export interface PipelinesApi {
  /** Stores (or replaces) by name; the source must already be valid. */
  register(pipeline: Pipeline, source: string): Promise<PipelineEntry>;
  list(): Promise<PipelineEntry[]>;
  /** Throws `pipeline_not_found`. */
  get(name: string): Promise<PipelineEntry>;
}

/**
 * Live events for WebSocket subscribers. Each call blocks up to `blockMs` for
 * new events and returns what arrived (possibly nothing); callers loop. Use a
 * dedicated Redis connection per tail (blocking reads).
 */
export interface EventTailApi {
  tailRun(runId: string, afterSeq: number, blockMs: number): Promise<RunEvent[]>;
  /** `afterCursor` undefined = only new events from now on; '0' = from the oldest kept. */
  tailAll(afterCursor: string | undefined, blockMs: number): Promise<CursorEvent[]>;
  close(): Promise<void>;
}

/** Nest injection tokens for the three ports above. */
export const RUNS_API = Symbol('RUNS_API');
export const PIPELINES_API = Symbol('PIPELINES_API');
export const EVENT_TAIL_FACTORY = Symbol('EVENT_TAIL_FACTORY');
/** Provider value under EVENT_TAIL_FACTORY: a fresh tail (own Redis connection) per subscriber. */
export type EventTailFactory = () => EventTailApi;
