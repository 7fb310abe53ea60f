import { Inject, Injectable } from '@nestjs/common';
import { RUNS_API, StageAttempts, type RunsApi } from '@stageflow/engine';

/** Where browser-host writes a line into a stage's run history. */
export abstract class StageActivity {
  /** Appends a `stage.log` (stderr) event while the attempt runs; a no-op once it has ended. */
  abstract note(runId: string, stageId: string, attempt: number, line: string): Promise<void>;
}

/** The runner's tail keeps 100 lines; the line added here does not grow it past that. */
const TAIL_LINES = 100;

/**
 * {@link StageActivity} through the engine's `StageAttempts.appendLogs`, the one
 * exported way to add an event to a run. The call also replaces the stage's log tail,
 * so the current tail is read first and the line added to it; the runner's next
 * append writes its own tail again (the event itself stays in the history).
 */
@Injectable()
export class EngineStageActivity extends StageActivity {
  constructor(
    @Inject(RUNS_API) private readonly runs: RunsApi,
    private readonly attempts: StageAttempts,
  ) {
    super();
  }

  async note(runId: string, stageId: string, attempt: number, line: string): Promise<void> {
    const stage = await this.runs.getStage(runId, stageId);
    const tail = [...stage.logTail, line].slice(-TAIL_LINES);
    await this.attempts.appendLogs({ runId, stageId, attempt }, [{ stream: 'stderr', line }], tail);
  }
}
