import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { parseLoginCheckRequest, type LoginCheckResult } from '@stageflow/contracts';
import { LoginChecks } from './login-check';
import { sessionIdParam } from './sessions.controller';

/** The login check of a stage session (`loginCheckRoute` in the contracts). */
@Controller('internal/sessions')
export class LoginCheckController {
  constructor(private readonly checks: LoginChecks) {}

  /** 200 `{logged_in, url}`; 400 bad body, 404 unknown session, 422 blocked site or bad selector, 502 page did not load. */
  @Post(':sessionId/check')
  @HttpCode(200)
  check(@Param('sessionId') sessionId: string, @Body() body: unknown): Promise<LoginCheckResult> {
    return this.checks.check(sessionIdParam(sessionId), parseLoginCheckRequest(body));
  }
}
