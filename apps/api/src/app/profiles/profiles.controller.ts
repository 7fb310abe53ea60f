import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Put } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { PROFILE_NAME_RULE } from '@stageflow/profiles';
import { ApiErrors, ApiGuardedRoutes } from '../core/api-errors.decorator';
import { ParseProfileNamePipe } from './parse-profile-name.pipe';
import { BrowserCheckDto, CheckNowDto, ProfileCheckResultDto } from './profile-check.dto';
import { CreateProfileDto, LeasedProfileResponseDto, ProfileResponseDto } from './profile.dto';
import { ProfilesApiService } from './profiles-api.service';

const NAME_PARAM = ApiParam({ name: 'name', schema: { type: 'string', pattern: PROFILE_NAME_RULE } });
const SERVER_ERRORS = {
  500: '`internal_error`; `profile_home_in_checkout` (STAGEFLOW_HOME is inside a project checkout); `profile_audit_failed` (done, but not audited)',
};

@ApiTags('profiles')
@ApiGuardedRoutes()
@Controller('profiles')
export class ProfilesController {
  constructor(private readonly profiles: ProfilesApiService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an empty browser profile (a saved login) on this Host.',
    description: 'The folder is created owner-only in the Stageflow home; its path is never returned. Audited as `profile_created`.',
  })
  @ApiCreatedResponse({ type: ProfileResponseDto })
  @ApiErrors({
    ...SERVER_ERRORS,
    400: '`profile_name_invalid` (the message quotes the name rule), `invalid_request` (also a bad `check`, naming the field), `invalid_json`',
    409: '`profile_exists` (also for a name differing only in case), `profile_folder_unsafe`',
    413: '`body_too_large`',
    415: '`unsupported_media_type`',
  })
  create(@Body() dto: CreateProfileDto): Promise<ProfileResponseDto> {
    return this.profiles.create(dto);
  }

  @Get()
  @ApiOperation({ summary: 'Browser profiles of this Host, by name, each with the run holding it and the runs waiting.' })
  @ApiOkResponse({ type: [LeasedProfileResponseDto] })
  @ApiErrors(SERVER_ERRORS)
  list(): Promise<LeasedProfileResponseDto[]> {
    return this.profiles.list();
  }

  @Get(':name')
  @NAME_PARAM
  @ApiOperation({ summary: 'One browser profile: size, the run holding its lease, the runs waiting (first in line first).' })
  @ApiOkResponse({ type: LeasedProfileResponseDto })
  @ApiErrors({ ...SERVER_ERRORS, 400: '`profile_name_invalid`', 404: '`profile_not_found`', 409: '`profile_folder_unsafe`' })
  get(@Param('name', ParseProfileNamePipe) name: string): Promise<LeasedProfileResponseDto> {
    return this.profiles.get(name);
  }

  @Put(':name/check')
  @NAME_PARAM
  @ApiOperation({
    summary: 'Set the profile\'s default login check (what "Check now" runs).',
    description: 'The body has the fields of a pipeline\'s `browser.check`: `url` and at least one of `logged_out_url`, `selector`, `cookie`. Replaces any earlier check.',
  })
  @ApiOkResponse({ type: LeasedProfileResponseDto })
  @ApiErrors({
    ...SERVER_ERRORS,
    400: '`profile_name_invalid`, `invalid_request` (names the field and what to put there), `invalid_json`',
    404: '`profile_not_found`',
    409: '`profile_folder_unsafe`',
    413: '`body_too_large`',
    415: '`unsupported_media_type`',
  })
  setCheck(@Param('name', ParseProfileNamePipe) name: string, @Body() dto: BrowserCheckDto): Promise<LeasedProfileResponseDto> {
    return this.profiles.setCheck(name, dto);
  }

  @Post(':name/check')
  @NAME_PARAM
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Check now whether the profile is logged in, outside any run.',
    description:
      'Runs the stored check, or `check` from the body (not stored), in a headless browser on the profile while holding its lease; ' +
      'refused (not queued) while a run holds it. The result is kept as the profile\'s `lastCheck`. Audited as `profile_checked`.',
  })
  @ApiOkResponse({ type: ProfileCheckResultDto })
  @ApiErrors({
    ...SERVER_ERRORS,
    400: '`profile_name_invalid`, `invalid_request` (a bad `check`, naming the field), `invalid_json`',
    404: '`profile_not_found`',
    409: '`profile_leased` (a run holds the profile, named in the message and `details.holder`; or another check runs), `profile_folder_unsafe`',
    422: '`profile_check_missing` (none stored, none given: the message says how to set one), `blocked_site`, `login_check_bad_selector`',
    502: '`login_check_unreachable`, `login_check_failed` (the check page did not load or could not be read), `browser_host_failed`',
    503: '`browser_host_unavailable` (browser-host did not answer), `browser_host_starting`',
  })
  checkNow(@Param('name', ParseProfileNamePipe) name: string, @Body() dto: CheckNowDto): Promise<ProfileCheckResultDto> {
    return this.profiles.checkNow(name, dto);
  }

  @Delete(':name')
  @NAME_PARAM
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Delete a browser profile and its saved login.',
    description:
      'Removes the folder and, through browser-host, the container host\'s Docker volume of the profile (its cookies), ' +
      'so a new profile of the same name starts logged out. Refused, removing nothing, while a run holds the profile or runs wait for it, ' +
      'while a container uses the volume, or while browser-host does not answer. Audited as `profile_deleted` with `browserData`.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({
    ...SERVER_ERRORS,
    400: '`profile_name_invalid`',
    404: '`profile_not_found`',
    409: '`profile_leased` (details: `{profile, holder?, waiters}`), `profile_in_use` (a browser container still uses the volume), `profile_folder_unsafe`',
    502: '`browser_host_failed` (browser-host could not remove the volume; nothing removed)',
    503: '`browser_host_unavailable` (browser-host did not answer: start it and delete again), `browser_host_starting`',
  })
  delete(@Param('name', ParseProfileNamePipe) name: string): Promise<void> {
    return this.profiles.delete(name);
  }
}
