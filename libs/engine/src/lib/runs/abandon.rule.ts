import type { StageState } from '@stageflow/contracts';

/** A stage as the abandoned-run check sees it. */
export interface SweptStage {
  id: string;
  state: StageState;
  attempt: number;
  /** Consecutive earlier checks that found no live job for this stage. */
  missingJobChecks: number;
  /** For queued/running stages: whether BullMQ still has the attempt's job waiting, delayed or active. */
  jobAlive?: boolean;
}

export interface AbandonVerdict {
  /** Set when the run must be marked abandoned: why, in words. */
  abandon?: string;
  /** New missing-job counts for queued/running stages (0 resets). */
  missingJobChecks: Record<string, number>;
}

/** States in which a stage can still make progress on its own or by an operator. */
const PROGRESS_STATES: readonly StageState[] = ['ready', 'queued', 'running', 'waiting'];

/**
 * The abandoned rule (docs/run-engine.md, "Abandoned runs"). A run that has
 * not ended is abandoned when
 * - none of its stages is ready, queued, running or waiting (after the engine
 *   tried to advance it): nothing can ever move it again; or
 * - a queued or running stage has had no live BullMQ job (waiting, delayed,
 *   prioritized or active) on `threshold` consecutive checks: the job was lost
 *   (removed, or failed without the engine hearing of it), so no runner will
 *   ever pick the stage up. One check is not enough: the engine records a
 *   stage as queued a moment before it adds its job.
 */
export function judgeRun(stages: readonly SweptStage[], threshold = 2): AbandonVerdict {
  const missingJobChecks: Record<string, number> = {};
  if (!stages.some((s) => PROGRESS_STATES.includes(s.state))) {
    return {
      abandon: 'nothing can make progress: no stage is ready, queued, running or waiting',
      missingJobChecks,
    };
  }
  let abandon: string | undefined;
  for (const stage of stages) {
    if (stage.state !== 'queued' && stage.state !== 'running') continue;
    const checks = stage.jobAlive ? 0 : stage.missingJobChecks + 1;
    missingJobChecks[stage.id] = checks;
    if (checks >= threshold && !abandon) {
      abandon =
        `stage "${stage.id}" is ${stage.state} (attempt ${stage.attempt}) but its job is gone from the stage queue ` +
        `(${checks} checks in a row); no runner will pick it up`;
    }
  }
  return { ...(abandon ? { abandon } : {}), missingJobChecks };
}
