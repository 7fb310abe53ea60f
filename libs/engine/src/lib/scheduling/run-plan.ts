import type { RunState, StageState } from '@stageflow/contracts';
import type { ConditionAst, StageDefinition } from '@stageflow/pipeline';

/** What the scheduler knows about one stage of a run. */
export interface PlannedStage {
  state: StageState;
  /** Attempt of the stage's current or last job; 0 before the first. */
  attempt: number;
  /** Why it is in this state (used to say why a run failed). */
  reason?: string;
  /** Output of a successful stage; the scheduler reads it only for parents of stages it decides. */
  output?: unknown;
}

/** The run as the scheduler sees it: everything it needs, nothing it must fetch. */
export interface RunPlanInput {
  runState: RunState;
  /** The run's input: root stages receive it, conditions read it as `input`. */
  input: unknown;
  maxActiveStages: number;
  stages: Readonly<Record<string, PlannedStage>>;
}

/**
 * One state change the engine must write. Each is a transition of one stage
 * or of the run; the engine applies a plan atomically and appends one event
 * per transition.
 */
export type PlanAction =
  /** pending → ready: all parents ended and the join rule says run; `input` is already validated. */
  | { type: 'stage-ready'; stageId: string; input: unknown }
  /** pending → skipped. */
  | { type: 'stage-skipped'; stageId: string; reason: string }
  /** pending → failed without starting (its input does not fit its input schema). */
  | { type: 'stage-failed'; stageId: string; reason: string }
  /** ready → queued: a slot is free; the engine enqueues the job for `attempt`. */
  | { type: 'stage-queued'; stageId: string; attempt: number }
  /** ready → waiting: a gate opens; it holds no slot and no job. */
  | { type: 'gate-opened'; stageId: string; message: string }
  /** A not yet ended stage is stopped because the run failed; `wasActive` stages may have a process to kill. */
  | { type: 'stage-cancelled'; stageId: string; reason: string; wasActive: boolean }
  | { type: 'run-state'; state: RunState; reason?: string };

/** Pure helpers the scheduler calls; injected so tests and the engine choose them. */
export interface PlanDeps {
  /** `evaluateCondition` of the pipeline lib. */
  evaluate(ast: ConditionAst, scope: { output: unknown; input: unknown }): boolean;
  /** Why `input` does not fit the stage's input schema, or undefined when it fits (or there is none). */
  checkInput(stage: StageDefinition, input: unknown): string | undefined;
}
