import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import type { ProfileBrowserDataResult } from '@stageflow/contracts';
import { assertProfileName } from '@stageflow/profiles';
import { ProfileBrowserData } from './profile-browser-data.service';

/** A profile's browser data outside the profile store (`profileBrowserDataRoute` in the contracts); the api's profile delete. */
@Controller('internal/profiles')
export class ProfileBrowserDataController {
  constructor(private readonly browserData: ProfileBrowserData) {}

  /** 200 `{browserData}`; 400 bad name, 409 leased or a container uses the volume, 503 starting. */
  @Delete(':profile/browser-data')
  @HttpCode(200)
  remove(@Param('profile') profile: string): Promise<ProfileBrowserDataResult> {
    assertProfileName(profile);
    return this.browserData.remove(profile);
  }
}
