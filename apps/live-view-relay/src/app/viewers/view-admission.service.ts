import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  isTerminalRunState,
  LIVE_VIEW_LIMITS,
  liveViewPath,
  parseLiveViewPath,
  type LiveViewTicketRecord,
  type SessionRecord,
} from '@stageflow/contracts';
import { RUNS_API, type RunsApi, type RunView } from '@stageflow/engine';
import { LiveViewTickets, StageSessionDirectory } from '@stageflow/live-view';

/** A viewer let in: what its ticket allows, and the stage session it watches. */
export interface Admitted {
  ok: true;
  ticket: LiveViewTicketRecord;
  session: SessionRecord;
}

/** A WebSocket upgrade turned away, with the HTTP answer it gets. */
export interface Refused {
  ok: false;
  status: number;
  code: string;
  message: string;
}

const refuse = (status: number, code: string, message: string): Refused => ({ ok: false, status, code, message });

/**
 * Decides whether a WebSocket upgrade becomes a viewer. The relay checks the ticket
 * itself (the api only forwards the upgrade): it must be unused and unexpired, issued
 * for this run and stage (it is consumed either way), the run must not have ended, the
 * ticket's stage session must still be open, and an interactive ticket's gate must not
 * be answered yet.
 */
@Injectable()
export class ViewAdmission {
  private readonly log = new Logger('ViewAdmission');

  constructor(
    private readonly tickets: LiveViewTickets,
    private readonly directory: StageSessionDirectory,
    @Inject(RUNS_API) private readonly runs: RunsApi,
  ) {}

  async admit(requestUrl: string | undefined): Promise<Admitted | Refused> {
    let url: URL;
    try {
      url = new URL(requestUrl ?? '/', 'http://relay');
    } catch {
      return refuse(400, 'invalid_request', 'The request URL is malformed.');
    }
    const path = parseLiveViewPath(url.pathname);
    if (!path) {
      return refuse(404, 'route_not_found', 'No live view here: connect to /api/runs/<run>/stages/<stage>/live-view?ticket=<ticket>.');
    }
    const ticket = url.searchParams.get('ticket');
    if (!ticket) {
      return refuse(401, 'ticket_missing', `A live view needs a ticket: POST ${liveViewPath(path.runId, path.stageId)}/tickets, then connect with ?ticket=<ticket>.`);
    }
    try {
      const record = await this.tickets.consume(ticket, path);
      if (!record) {
        return refuse(
          401,
          'ticket_invalid',
          `The ticket is unknown, used, expired (after ${LIVE_VIEW_LIMITS.ticketTtlSeconds} s) or revoked; each ticket opens one view. Ask for a new one: POST ${liveViewPath(path.runId, path.stageId)}/tickets.`,
        );
      }
      const closed = await this.closedReason(record);
      if (closed) return refuse(409, 'live_view_closed', closed);
      const session = await this.directory.get(record.sessionId);
      if (!session) {
        return refuse(409, 'live_view_closed', `Stage "${record.stageId}" (attempt ${record.attempt}) has no open browser any more: it ended or was retried. Open the live view of its current attempt.`);
      }
      return { ok: true, ticket: record, session };
    } catch (error) {
      this.log.warn({ msg: `Could not check a live-view ticket: ${(error as Error).message}`, runId: path.runId, stageId: path.stageId });
      return refuse(503, 'relay_unavailable', 'The live view relay cannot reach Redis right now; try again in a moment.');
    }
  }

  private async closedReason(record: LiveViewTicketRecord): Promise<string | undefined> {
    let run: RunView;
    try {
      run = await this.runs.getRun(record.runId);
    } catch (error) {
      if ((error as { code?: string }).code === 'run_not_found') return `Run "${record.runId}" does not exist.`;
      throw error;
    }
    if (isTerminalRunState(run.state)) return `Run "${record.runId}" has ended (${run.state}); its live view is closed.`;
    const stage = run.stages.find((s) => s.id === record.stageId);
    if (record.mode === 'interactive' && stage?.gate?.answer) {
      return `The gate of stage "${record.stageId}" was answered, so its interactive live view is closed. A view-only ticket still shows the page while the stage runs.`;
    }
    return undefined;
  }
}
