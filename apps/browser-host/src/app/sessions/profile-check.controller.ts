import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { parseLoginCheckRequest, type LoginCheckResult } from '@stageflow/contracts';
import { assertProfileName } from '@stageflow/profiles';
import { ProfileChecks } from './profile-check.service';

/** A profile's login checked outside any run (`profileCheckRoute` in the contracts); the api's "Check now". */
@Controller('internal/profiles')
export class ProfileCheckController {
  constructor(private readonly checks: ProfileChecks) {}

  /** 200 `{logged_in, url}`; 400 bad name or body, 404 no such profile, 409 leased, 422 blocked site or bad selector, 502 page did not load. */
  @Post(':profile/check')
  @HttpCode(200)
  check(@Param('profile') profile: string, @Body() body: unknown): Promise<LoginCheckResult> {
    assertProfileName(profile);
    return this.checks.check(profile, parseLoginCheckRequest(body));
  }
}
