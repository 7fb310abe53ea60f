import { Inject, Injectable } from '@nestjs/common';
import { isTerminalRunState, StageflowError, type StageState } from '@stageflow/contracts';
import { RUNS_API, type RunsApi } from '@stageflow/engine';

/** A stage as browser-host needs to know it: its state at its current attempt. */
export interface StageNow {
  state: StageState;
  attempt: number;
}

/**
 * What browser-host asks the engine about runs, through its stable port (RUNS_API),
 * never through raw keys. A run the engine does not know is `gone`.
 */
export abstract class RunStates {
  /** True while the run exists and has not ended. Other engine errors propagate (liveness unknown). */
  abstract isAlive(runId: string): Promise<boolean>;
  /** The stage now, or `gone` when the run or stage does not exist. */
  abstract stage(runId: string, stageId: string): Promise<StageNow | 'gone'>;
}

function isGone(error: unknown): boolean {
  return error instanceof StageflowError && (error.code === 'run_not_found' || error.code === 'stage_not_found');
}

@Injectable()
export class EngineRunStates extends RunStates {
  constructor(@Inject(RUNS_API) private readonly runs: RunsApi) {
    super();
  }

  async isAlive(runId: string): Promise<boolean> {
    try {
      return !isTerminalRunState((await this.runs.getRun(runId)).state);
    } catch (error) {
      if (isGone(error)) return false;
      throw error;
    }
  }

  async stage(runId: string, stageId: string): Promise<StageNow | 'gone'> {
    try {
      const stage = await this.runs.getStage(runId, stageId);
      return { state: stage.state, attempt: stage.attempt };
    } catch (error) {
      if (isGone(error)) return 'gone';
      throw error;
    }
  }
}
