import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { LoginCheckRequest, LoginCheckResult } from '@stageflow/contracts';
import { Type } from 'class-transformer';
import { IsNotEmpty, IsObject, IsOptional, IsString, IsUrl, Matches, MaxLength, ValidateNested } from 'class-validator';
import { invalidRequest } from '../core/request-errors';

/** Same bound as the contracts' login-check request. */
const MAX_TEXT = 2048;

/**
 * A profile's login check: the same fields and rules as a pipeline's
 * `browser.check` (snake case, as in YAML), so a check can be copied between them.
 */
export class BrowserCheckDto {
  @ApiProperty({ description: 'The page the Host opens to judge the login (absolute http(s) URL, no user:password).', example: 'https://app.example.com/account' })
  @IsString({ message: 'must be a string: the page the Host opens to judge the login' })
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false, disallow_auth: true },
    { message: 'must be an absolute http(s) URL such as https://app.example.com/account (no user:password)' },
  )
  @MaxLength(MAX_TEXT, { message: `must be at most ${MAX_TEXT} characters` })
  url!: string;

  @ApiPropertyOptional({ description: 'Logged out if the final URL matches (a substring, or a glob with `*`).', example: '*/login*' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @IsNotEmpty({ message: 'must not be empty; leave it out instead' })
  @MaxLength(MAX_TEXT, { message: `must be at most ${MAX_TEXT} characters` })
  logged_out_url?: string;

  @ApiPropertyOptional({ description: 'Logged in only if this CSS selector is on the page.', example: '#user-menu' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @IsNotEmpty({ message: 'must not be empty; leave it out instead' })
  @MaxLength(MAX_TEXT, { message: `must be at most ${MAX_TEXT} characters` })
  selector?: string;

  @ApiPropertyOptional({ description: 'Logged in only if a cookie of this name is set for `url` (the name only).', example: 'session_id' })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @Matches(/^[^=;\s]{1,256}$/, { message: 'must be the name of the login cookie only (no "=", ";", spaces or value), e.g. session_id' })
  cookie?: string;
}

/** Body of `POST /api/profiles/:name/check`: optionally a check to run instead of the stored one. */
export class CheckNowDto {
  @ApiPropertyOptional({ type: BrowserCheckDto, description: 'Run this check instead of the profile\'s stored one (it is not stored).' })
  @IsOptional()
  @IsObject({ message: 'must be an object like {"url": "https://…", "logged_out_url": "*/login*"}' })
  @ValidateNested()
  @Type(() => BrowserCheckDto)
  check?: BrowserCheckDto;
}

/**
 * The check as browser-host takes it. The cross-field rule of `browser.check`
 * (at least one criterion) is applied here, with the field named as the client sent it.
 *
 * @throws `invalid_request` (400) when no criterion is given
 */
export function toLoginCheckRequest(dto: BrowserCheckDto, field: string): LoginCheckRequest {
  if (dto.logged_out_url === undefined && dto.selector === undefined && dto.cookie === undefined) {
    throw invalidRequest([
      {
        field,
        problem:
          'has no criterion, so the Host cannot tell logged in from logged out: add at least one of logged_out_url ' +
          '(the page you land on when logged out), selector (present only when logged in) or cookie (set only when logged in)',
      },
    ]);
  }
  return {
    url: dto.url,
    ...(dto.logged_out_url !== undefined ? { loggedOutUrl: dto.logged_out_url } : {}),
    ...(dto.selector !== undefined ? { selector: dto.selector } : {}),
    ...(dto.cookie !== undefined ? { cookie: dto.cookie } : {}),
  };
}

/** The stored check back in the API's (YAML's) field names. */
export function toBrowserCheckDto(check: LoginCheckRequest): BrowserCheckDto {
  return {
    url: check.url,
    ...(check.loggedOutUrl !== undefined ? { logged_out_url: check.loggedOutUrl } : {}),
    ...(check.selector !== undefined ? { selector: check.selector } : {}),
    ...(check.cookie !== undefined ? { cookie: check.cookie } : {}),
  };
}

/** The last "Check now" of a profile. */
export class ProfileCheckResultDto {
  @ApiProperty({ description: 'Whether the profile was logged in.' })
  loggedIn!: boolean;
  @ApiProperty({ description: 'Where the check page ended up, after redirects.', example: 'https://app.example.com/login?next=/account' })
  url!: string;
  @ApiProperty({ format: 'date-time' })
  checkedAt!: string;

  static from(result: LoginCheckResult, checkedAt: string): ProfileCheckResultDto {
    return { loggedIn: result.logged_in, url: result.url, checkedAt };
  }
}
