import { DynamicModule, Module } from '@nestjs/common';
import type { RedisConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import type { RunLiveness } from './lease.types';
import { ProfileLeases } from './profile-leases.service';

export interface LeasesModuleOptions {
  /** Lets waiting runs reclaim leases of dead runs (see {@link ProfileLeasesOptions.isRunAlive}). */
  isRunAlive?: RunLiveness;
}

/** Provides {@link ProfileLeases} on the app's Redis; its connections close on application shutdown. */
@Module({})
export class LeasesModule {
  static forRoot(redis: RedisConfig, options: LeasesModuleOptions = {}): DynamicModule {
    return {
      module: LeasesModule,
      providers: [
        {
          provide: ProfileLeases,
          useFactory: () =>
            new ProfileLeases({ redis: redis.url, keys: new RedisKeys(redis.prefix), isRunAlive: options.isRunAlive }),
        },
      ],
      exports: [ProfileLeases],
    };
  }
}
