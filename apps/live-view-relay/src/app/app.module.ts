import { DynamicModule, Module } from '@nestjs/common';
import type { ServiceConfig } from '@stageflow/config';
import { HealthModule } from '@stageflow/health';
import { LoggingModule } from '@stageflow/logging';
import { SERVICE_CONFIG, SERVICE_NAME } from './service-config';

/**
 * live-view-relay: one WebSocket per viewer, screencast out and input in (see
 * docs/architecture.md). For now it boots, logs and reports its health.
 */
@Module({})
export class AppModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot(SERVICE_NAME, config.logLevel),
        HealthModule.forRoot({ service: SERVICE_NAME, redisUrl: config.redis.url }),
      ],
      providers: [{ provide: SERVICE_CONFIG, useValue: config }],
    };
  }
}
