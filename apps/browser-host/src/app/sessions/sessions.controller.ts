import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { NotFoundError, parseOpenStageSessionRequest, parseStageActivityReport, type ReopenedStageSession, type StageSession } from '@stageflow/contracts';
import { AllowlistAudits } from './allowlist-audits.service';
import { StageSessions, type StageSessionView } from './stage-sessions.service';

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A route's `:sessionId`, or 404 when it cannot be one. */
export function sessionIdParam(raw: string): string {
  if (!SESSION_ID.test(raw)) throw new NotFoundError('session_not_found', `"${raw}" is not a stage session id.`);
  return raw;
}

/**
 * The runner's side of stage sessions (`BROWSER_SESSION_ROUTES` in the contracts).
 * Internal: browser-host binds to 127.0.0.1 (or the stack's internal network).
 */
@Controller('internal/sessions')
export class SessionsController {
  constructor(
    private readonly sessions: StageSessions,
    private readonly audits: AllowlistAudits,
  ) {}

  /** 201 with the session; 400 contract violation, 409 stale lease or ended run, 422 blocked site. */
  @Post()
  open(@Body() body: unknown): Promise<StageSession> {
    return this.sessions.open(parseOpenStageSessionRequest(body));
  }

  @Get(':sessionId')
  view(@Param('sessionId') sessionId: string): Promise<StageSessionView> {
    return this.sessions.view(sessionIdParam(sessionId));
  }

  /**
   * The runner's report of a profile stage's agent-browser navigations (hosts only), audited
   * against its allow_domains. 204; 400 contract violation; 404 `allowlist_audit_not_found`
   * (already audited, overdue, or not audited); 500 `allowlist_audit_failed`. Accepted also
   * after the session closed: a cancel closes it before the runner has read the activity.
   */
  @Post(':sessionId/activity')
  @HttpCode(204)
  async activity(@Param('sessionId') sessionId: string, @Body() body: unknown): Promise<void> {
    await this.audits.report(sessionIdParam(sessionId), parseStageActivityReport(body));
  }

  /** "Reopen browser tab" (live view): 200 the new tab and its address; 404 unknown session, 409 tab gone, 429 within 2 s of the last one. */
  @Post(':sessionId/reopen')
  @HttpCode(200)
  reopen(@Param('sessionId') sessionId: string): Promise<ReopenedStageSession> {
    return this.sessions.reopen(sessionIdParam(sessionId));
  }

  /** 204 whether or not the session was open. */
  @Delete(':sessionId')
  @HttpCode(204)
  async close(@Param('sessionId') sessionId: string): Promise<void> {
    if (SESSION_ID.test(sessionId)) await this.sessions.close(sessionId);
  }
}
