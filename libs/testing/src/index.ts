export { testRedisUrl, uniquePrefix } from './lib/redis-test';
