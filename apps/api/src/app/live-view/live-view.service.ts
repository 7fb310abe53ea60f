import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConflictError, isTerminalRunState, liveViewPath, type LiveViewMode } from '@stageflow/contracts';
import { RUNS_API, type RunsApi } from '@stageflow/engine';
import { LiveViewTickets, StageSessionDirectory } from '@stageflow/live-view';
import type { LiveViewTicketResponseDto } from './live-view.dto';

/** Issues live-view tickets for a stage that has an open browser (docs/live-view.md, "Tickets"). */
@Injectable()
export class LiveViewService {
  private readonly log = new Logger('LiveView');

  constructor(
    @Inject(RUNS_API) private readonly runs: RunsApi,
    private readonly directory: StageSessionDirectory,
    private readonly tickets: LiveViewTickets,
  ) {}

  /**
   * A ticket for the stage's current browser session.
   *
   * @throws `run_not_found`, `stage_not_found` (404); `run_finished`, `live_view_closed`
   *   (interactive, gate answered), `live_view_unavailable` (no open browser) (409).
   */
  async issue(runId: string, stageId: string, mode: LiveViewMode): Promise<LiveViewTicketResponseDto> {
    const stage = await this.runs.getStage(runId, stageId);
    const run = await this.runs.getRun(runId);
    if (isTerminalRunState(run.state)) {
      throw new ConflictError('run_finished', `Run "${runId}" has ended (${run.state}); its browsers are closed, so there is nothing to show.`);
    }
    if (mode === 'interactive' && stage.gate?.answer) {
      throw new ConflictError(
        'live_view_closed',
        `The gate of stage "${stageId}" was answered, so its interactive live view is closed. Ask for {"mode":"view-only"} to watch the page while the stage runs.`,
      );
    }
    const session = await this.directory.openSessionOf(runId, stageId);
    if (!session || session.attempt < stage.attempt) {
      throw new ConflictError(
        'live_view_unavailable',
        `Stage "${stageId}" has no open browser right now (it is not a browser stage, or it is not running: ${stage.state}). A live view is there while a browser stage runs.`,
      );
    }
    const { ticket, record } = await this.tickets.issue(
      { runId, stageId, attempt: session.attempt, sessionId: session.sessionId },
      mode,
    );
    // The ticket itself is never logged.
    this.log.log({ msg: 'Issued a live-view ticket', runId, stageId, attempt: session.attempt, mode, profile: session.profile, browserId: session.browserId });
    return { ticket, mode, expiresAt: record.expiresAt, path: liveViewPath(runId, stageId) };
  }
}
