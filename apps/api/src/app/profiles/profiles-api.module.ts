import { DynamicModule, Module } from '@nestjs/common';
import type { ApiConfig } from '@stageflow/config';
import { LeasesModule, ProfileLeases } from '@stageflow/leases';
import { LOCAL_SCOPE, ProfilesModule } from '@stageflow/profiles';
import { RedisKeys } from '@stageflow/contracts';
import Redis from 'ioredis';
import { BrowserHostBrowserData, HttpBrowserHostBrowserData } from './browser-host-browser-data.adapter';
import { BrowserHostChecks, HttpBrowserHostChecks } from './browser-host-checks.adapter';
import { PROFILE_CHECK_REDIS, ProfileCheckRecords, RedisProfileCheckRecords } from './profile-check-records.repository';
import { ProfilesController } from './profiles.controller';
import { PROFILES_CLOCK, ProfilesApiService } from './profiles-api.service';

/**
 * `/api/profiles`: the Host's browser profiles in the local scope, their leases on the api's Redis,
 * their login checks (kept on Redis, run in browser-host).
 */
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
      providers: [
        ProfilesApiService,
        {
          provide: PROFILE_CHECK_REDIS,
          useFactory: () => {
            // Lazy: an api whose profiles are never checked never connects.
            const client = new Redis(config.redis.url, { maxRetriesPerRequest: 2, lazyConnect: true, connectionName: 'stageflow-profile-checks' });
            // Reported by the failing command; without a listener ioredis would print every reconnect.
            client.on('error', () => undefined);
            return client;
          },
        },
        {
          provide: ProfileCheckRecords,
          useFactory: (client: Redis) => new RedisProfileCheckRecords(client, new RedisKeys(config.redis.prefix)),
          inject: [PROFILE_CHECK_REDIS],
        },
        { provide: BrowserHostChecks, useFactory: () => new HttpBrowserHostChecks(config.browserHostUrl) },
        { provide: BrowserHostBrowserData, useFactory: () => new HttpBrowserHostBrowserData(config.browserHostUrl) },
        { provide: PROFILES_CLOCK, useValue: { now: () => new Date() } },
      ],
    };
  }
}
