import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { HEALTH_OPTIONS, HealthOptions } from './health.options';
import { RedisHealthPort } from './redis-health.adapter';

export interface HealthDto {
  status: 'ok';
  service: string;
}

/** Liveness for compose and orchestrators: healthy means this process can reach Redis. */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(RedisHealthPort) private readonly redis: RedisHealthPort,
    @Inject(HEALTH_OPTIONS) private readonly options: HealthOptions,
  ) {}

  @Get()
  async check(): Promise<HealthDto> {
    const service = this.options.service;
    if (await this.redis.ping()) return { status: 'ok', service };
    throw new ServiceUnavailableException({
      code: 'redis_unavailable',
      message: `${service} cannot reach Redis at ${this.redis.target()}: check that Redis is running and that STAGEFLOW_REDIS_URL points to it`,
      details: { service },
    });
  }
}
