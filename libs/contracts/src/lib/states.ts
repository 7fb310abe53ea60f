/** Lifecycle of a run. `abandoned` marks a run the engine lost track of (see docs/run-engine.md). */
export const RUN_STATES = ['queued', 'running', 'waiting', 'success', 'failed', 'cancelled', 'abandoned'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const TERMINAL_RUN_STATES: readonly RunState[] = ['success', 'failed', 'cancelled', 'abandoned'];

/**
 * Lifecycle of one stage of a run.
 * - `pending`: parents not resolved yet.
 * - `ready`: may start, waits for a free slot of the run's `max_active_stages`.
 * - `queued`: its job is in the stage queue; holds a slot.
 * - `waiting`: parked without worker or slot (a gate for the operator, later a profile lease); `reason` says why.
 * - `running`: a runner executes it; holds a slot.
 */
export const STAGE_STATES = [
  'pending',
  'ready',
  'queued',
  'waiting',
  'running',
  'success',
  'failed',
  'timed_out',
  'cancelled',
  'skipped',
] as const;
export type StageState = (typeof STAGE_STATES)[number];
export const TERMINAL_STAGE_STATES: readonly StageState[] = ['success', 'failed', 'timed_out', 'cancelled', 'skipped'];
/** States that count against the run's `max_active_stages`. */
export const SLOT_STAGE_STATES: readonly StageState[] = ['queued', 'running'];

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

export function isTerminalStageState(state: StageState): boolean {
  return TERMINAL_STAGE_STATES.includes(state);
}
