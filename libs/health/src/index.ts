export { HealthModule } from './lib/health.module';
export { HealthController } from './lib/health.controller';
export type { HealthDto } from './lib/health.controller';
export { RedisHealthPort, RedisHealthAdapter } from './lib/redis-health.adapter';
export type { HealthOptions } from './lib/health.options';
