import { Module } from '@nestjs/common';
import { EngineRedis } from '@stageflow/engine';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { REDIS_PROBE, type RedisProbe } from './redis.probe';

/** Longest a health check waits for Redis; probes come every few seconds. */
const PING_TIMEOUT_MS = 1000;

@Module({
  controllers: [HealthController],
  providers: [
    HealthService,
    // The engine's command connection: if it cannot reach Redis, neither can the routes.
    { provide: REDIS_PROBE, inject: [EngineRedis], useFactory: (redis: EngineRedis): RedisProbe => ({ ping: () => redis.ping(PING_TIMEOUT_MS) }) },
  ],
})
export class HealthModule {}
