import { Inject, Injectable } from '@nestjs/common';
import { StageflowError } from '@stageflow/contracts';
import type { HealthResponseDto } from './health.dto';
import { REDIS_PROBE, type RedisProbe } from './redis.probe';

@Injectable()
export class HealthService {
  constructor(@Inject(REDIS_PROBE) private readonly redis: RedisProbe) {}

  async check(): Promise<HealthResponseDto> {
    if (await this.redis.ping()) return { status: 'ok' };
    throw new StageflowError(
      'redis_unavailable',
      'Redis does not answer: check that it runs and that STAGEFLOW_REDIS_URL points at it.',
      503,
    );
  }
}
