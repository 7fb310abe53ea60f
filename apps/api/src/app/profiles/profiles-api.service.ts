import { Inject, Injectable, Logger } from '@nestjs/common';
import { StageflowError, type LoginCheckRequest } from '@stageflow/contracts';
import { PROFILE_SCOPE, ProfileNotFoundError, ProfileService, ProfileStore } from '@stageflow/profiles';
import { BrowserHostBrowserData } from './browser-host-browser-data.adapter';
import { BrowserHostChecks } from './browser-host-checks.adapter';
import { ProfileCheckRecords, type ProfileCheckRecord } from './profile-check-records.repository';
import { toBrowserCheckDto, toLoginCheckRequest, type BrowserCheckDto, type CheckNowDto, ProfileCheckResultDto } from './profile-check.dto';
import { LeasedProfileResponseDto, ProfileResponseDto, type CreateProfileDto } from './profile.dto';

/** The api's clock; a token so tests set the time. */
export const PROFILES_CLOCK = Symbol('PROFILES_CLOCK');
export interface ProfilesClock {
  now(): Date;
}

/** The profile routes over the profiles lib, in the Host's scope (never the client's choice). */
@Injectable()
export class ProfilesApiService {
  private readonly log = new Logger('ProfilesApi');

  constructor(
    private readonly profiles: ProfileService,
    @Inject(ProfileStore) private readonly store: Pick<ProfileStore, 'exists'>,
    private readonly checks: ProfileCheckRecords,
    private readonly browserHost: BrowserHostChecks,
    private readonly browserData: BrowserHostBrowserData,
    @Inject(PROFILES_CLOCK) private readonly clock: ProfilesClock,
    @Inject(PROFILE_SCOPE) private readonly scope: string,
  ) {}

  /** Creates the profile, with its default check when given (validated before the folder is made). */
  async create(dto: CreateProfileDto): Promise<ProfileResponseDto> {
    const check = dto.check ? toLoginCheckRequest(dto.check, 'check') : undefined;
    const profile = ProfileResponseDto.from(await this.profiles.create(this.scope, dto.name));
    if (!check) return profile;
    await this.checks.saveCheck(this.scope, dto.name, check);
    return { ...profile, check: toBrowserCheckDto(check) };
  }

  async list(): Promise<LeasedProfileResponseDto[]> {
    const profiles = await this.profiles.list(this.scope);
    const records = await this.checks.read(this.scope, profiles.map((p) => p.name));
    return profiles.map((p, i) => withCheck(LeasedProfileResponseDto.from(p), records[i]));
  }

  async get(name: string): Promise<LeasedProfileResponseDto> {
    const profile = LeasedProfileResponseDto.from(await this.profiles.get(this.scope, name));
    const [record] = await this.checks.read(this.scope, [name]);
    return withCheck(profile, record);
  }

  /** Sets (replaces) the profile's default check. */
  async setCheck(name: string, dto: BrowserCheckDto): Promise<LeasedProfileResponseDto> {
    const check = toLoginCheckRequest(dto, 'body');
    await this.assertExists(name);
    await this.checks.saveCheck(this.scope, name, check);
    return this.get(name);
  }

  /**
   * "Check now": runs the given check, else the stored one, in browser-host
   * (which holds the profile's lease meanwhile and audits it), and keeps the result.
   *
   * @throws `profile_check_missing` (422) when neither is there; browser-host's
   * `profile_leased` (409), `blocked_site` (422), `login_check_*` (422/502)
   */
  async checkNow(name: string, dto: CheckNowDto): Promise<ProfileCheckResultDto> {
    const given = dto.check ? toLoginCheckRequest(dto.check, 'check') : undefined;
    await this.assertExists(name);
    const criteria: LoginCheckRequest = given ?? (await this.storedCheck(name));
    const result = await this.browserHost.check(name, criteria);
    const last = ProfileCheckResultDto.from(result, this.clock.now().toISOString());
    await this.checks.saveLast(this.scope, name, last);
    return last;
  }

  /**
   * Deletes the profile: after the existence and lease checks, browser-host removes
   * its browser data (the container host's volume, cookies included), then the folder
   * goes. If browser-host does not answer or refuses, nothing is removed.
   */
  async delete(name: string): Promise<void> {
    await this.profiles.delete(this.scope, name, () => this.browserData.remove(name));
    // The folder is gone; a check record left behind would greet a new profile of the same name.
    await this.checks.remove(this.scope, name).catch((error: Error) =>
      this.log.warn({ msg: `Could not forget the deleted profile's login check: ${error.message}`, profile: name }),
    );
  }

  private async storedCheck(name: string): Promise<LoginCheckRequest> {
    const [record] = await this.checks.read(this.scope, [name]);
    if (record?.check) return record.check;
    throw new StageflowError(
      'profile_check_missing',
      `Profile "${name}" has no login check to run. Set one with PUT /api/profiles/${name}/check ` +
        '{"url": "https://…", "logged_out_url": "*/login*"} (the same fields as a pipeline\'s browser.check), ' +
        'or send one with this request as {"check": {…}}.',
      422,
      { profile: name },
    );
  }

  private async assertExists(name: string): Promise<void> {
    if (!(await this.store.exists(this.scope, name))) throw new ProfileNotFoundError(name);
  }
}

function withCheck(profile: LeasedProfileResponseDto, record: ProfileCheckRecord | undefined): LeasedProfileResponseDto {
  return {
    ...profile,
    ...(record?.check ? { check: toBrowserCheckDto(record.check) } : {}),
    ...(record?.last ? { lastCheck: { loggedIn: record.last.loggedIn, url: record.last.url, checkedAt: record.last.checkedAt } } : {}),
  };
}
