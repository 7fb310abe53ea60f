import { DynamicModule, Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HEALTH_OPTIONS, HealthOptions } from './health.options';
import { RedisHealthAdapter, RedisHealthPort } from './redis-health.adapter';

/**
 * `GET /health` for services that have no other probe: 200 when this process
 * reaches Redis, 503 `redis_unavailable` otherwise (browser-host, live-view-relay).
 */
@Module({})
export class HealthModule {
  static forRoot(options: HealthOptions): DynamicModule {
    return {
      module: HealthModule,
      controllers: [HealthController],
      providers: [
        { provide: HEALTH_OPTIONS, useValue: options },
        { provide: RedisHealthPort, useClass: RedisHealthAdapter },
      ],
      exports: [RedisHealthPort],
    };
  }
}
