import {
  isTerminalRunState,
  isTerminalStageState,
  RedisKeys,
  RunState,
  StageState,
  TERMINAL_RUN_STATES,
  TERMINAL_STAGE_STATES,
} from '@stageflow/contracts';
import type { Commit, FieldCheck, OpRef } from '../store/commit';
import { RUN_FIELDS, STAGE_FIELDS } from '../store/record.codec';

/** Checks used by transitions. */
export const expectStage = {
  in: (...states: StageState[]): FieldCheck => ({ field: STAGE_FIELDS.state, in: states }),
  open: (): FieldCheck => ({ field: STAGE_FIELDS.state, nin: TERMINAL_STAGE_STATES }),
  attempt: (attempt: number): FieldCheck => ({ field: STAGE_FIELDS.attempt, in: [String(attempt)] }),
  /** The job is of the stage's latest lease wake (a job of an earlier wake is stale). */
  wake: (wake: number | undefined): FieldCheck =>
    wake ? { field: STAGE_FIELDS.leaseWakes, in: [String(wake)] } : { field: STAGE_FIELDS.leaseWakes, unset: true },
};
export const expectRun = {
  in: (...states: RunState[]): FieldCheck => ({ field: RUN_FIELDS.state, in: states }),
  open: (): FieldCheck => ({ field: RUN_FIELDS.state, nin: TERMINAL_RUN_STATES }),
};

export interface StageTransition {
  expect: readonly FieldCheck[];
  soft?: boolean;
  state: StageState;
  attempt: number;
  /** Why; an absent reason clears the previous one. */
  reason?: string;
  /** Further fields to write (undefined deletes). */
  fields?: Record<string, string | number | undefined>;
}

/** Adds a stage state change and its `stage.state` event to a commit. */
export function transitionStage(
  commit: Commit,
  keys: RedisKeys,
  stageId: string,
  change: StageTransition,
): OpRef {
  const op = commit.hash(keys.stage(commit.runId, stageId), {
    expect: change.expect,
    soft: change.soft,
    set: {
      [STAGE_FIELDS.state]: change.state,
      [STAGE_FIELDS.attempt]: change.attempt,
      [STAGE_FIELDS.reason]: change.reason,
      ...(isTerminalStageState(change.state) ? { [STAGE_FIELDS.endedAt]: commit.at } : {}),
      ...change.fields,
    },
  });
  commit.event(
    'stage.state',
    { state: change.state, attempt: change.attempt, ...(change.reason ? { reason: change.reason } : {}) },
    stageId,
    change.soft ? op : undefined,
  );
  return op;
}

/** Adds a run state change, its `run.state` event and (when it ends) its removal from the active set. */
export function transitionRun(
  commit: Commit,
  keys: RedisKeys,
  change: { expect: readonly FieldCheck[]; state: RunState; reason?: string; soft?: boolean },
): OpRef {
  const ended = isTerminalRunState(change.state);
  const op = commit.hash(keys.run(commit.runId), {
    expect: change.expect,
    soft: change.soft,
    set: {
      [RUN_FIELDS.state]: change.state,
      [RUN_FIELDS.reason]: change.reason,
      [RUN_FIELDS.updatedAt]: commit.at,
      ...(ended ? { [RUN_FIELDS.endedAt]: commit.at } : {}),
    },
  });
  if (ended) commit.srem(keys.activeRuns(), commit.runId);
  commit.event(
    'run.state',
    { state: change.state, ...(change.reason ? { reason: change.reason } : {}) },
    undefined,
    change.soft ? op : undefined,
  );
  return op;
}
