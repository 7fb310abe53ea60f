import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { RedisHealthPort } from './redis-health.adapter';
import { SERVICE_NAME } from '../service-config';

export interface HealthDto {
  status: 'ok';
  service: string;
}

/** Liveness for compose and orchestrators: healthy means this process can reach Redis. */
@Controller('health')
export class HealthController {
  constructor(@Inject(RedisHealthPort) private readonly redis: RedisHealthPort) {}

  @Get()
  async check(): Promise<HealthDto> {
    if (await this.redis.ping()) return { status: 'ok', service: SERVICE_NAME };
    throw new ServiceUnavailableException({
      code: 'redis_unavailable',
      message: `${SERVICE_NAME} cannot reach Redis at ${this.redis.target()}: check that Redis is running and that STAGEFLOW_REDIS_URL points to it`,
      details: { service: SERVICE_NAME },
    });
  }
}
