import { DynamicModule, Module } from '@nestjs/common';
import type { ServiceConfig } from '@stageflow/config';
import { LoggingModule } from '@stageflow/logging';
import { HealthController } from './health/health.controller';
import { RedisHealthAdapter, RedisHealthPort } from './health/redis-health.adapter';
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
      imports: [LoggingModule.forRoot(SERVICE_NAME, config.logLevel)],
      controllers: [HealthController],
      providers: [
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: RedisHealthPort, useClass: RedisHealthAdapter },
      ],
    };
  }
}
