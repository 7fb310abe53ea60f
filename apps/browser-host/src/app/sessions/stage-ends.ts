import { isTerminalStageState, type StageState } from '@stageflow/contracts';

/** A `stage.state` event as the watcher reads it. */
export interface StageStateChange {
  stageId: string;
  state: StageState;
  attempt: number;
}

/**
 * Whether a stage state change ends a session of that stage: the session's attempt
 * reached a terminal state, or a newer attempt exists (a retry is queued as
 * `queued, attempt n+1` without a terminal state for attempt n, e.g. after the runner
 * of attempt n was SIGKILLed and the engine recorded it lost).
 */
export function endsSession(session: { stageId: string; attempt: number }, change: StageStateChange): boolean {
  if (session.stageId !== change.stageId) return false;
  if (change.attempt > session.attempt) return true;
  return change.attempt === session.attempt && isTerminalStageState(change.state);
}
