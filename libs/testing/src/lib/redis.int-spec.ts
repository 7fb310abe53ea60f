import Redis from 'ioredis';
import { testRedisUrl, uniquePrefix } from '../index';

describe('integration Redis', () => {
  it('is reachable and runs with AOF and noeviction', async () => {
    const redis = new Redis(testRedisUrl());
    try {
      const key = `${uniquePrefix()}probe`;
      await redis.set(key, 'ok', 'PX', 5000);
      expect(await redis.get(key)).toBe('ok');
      expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      redis.disconnect();
    }
  });
});
