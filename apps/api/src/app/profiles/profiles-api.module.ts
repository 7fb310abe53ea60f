import { DynamicModule, Module } from '@nestjs/common';
import type { ApiConfig } from '@stageflow/config';
import { LeasesModule, ProfileLeases } from '@stageflow/leases';
import { LOCAL_SCOPE, ProfilesModule } from '@stageflow/profiles';
import { ProfilesController } from './profiles.controller';
import { ProfilesApiService } from './profiles-api.service';

/** `/api/profiles`: the Host's browser profiles in the local scope, their leases on the api's Redis. */
@Module({})
export class ProfilesApiModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: ProfilesApiModule,
      imports: [
        ProfilesModule.forRoot({
          home: config.home,
          scope: LOCAL_SCOPE,
          leases: { imports: [LeasesModule.forRoot(config.redis)], useExisting: ProfileLeases },
        }),
      ],
      controllers: [ProfilesController],
      providers: [ProfilesApiService],
    };
  }
}
