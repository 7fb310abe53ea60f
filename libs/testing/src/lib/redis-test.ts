import { randomBytes } from 'node:crypto';

/** URL of the integration run's Redis; fails loudly outside the integration tier. */
export function testRedisUrl(): string {
  const url = process.env['STAGEFLOW_TEST_REDIS_URL'];
  if (!url) throw new Error('STAGEFLOW_TEST_REDIS_URL is not set: run integration tests with `npm run test:int`');
  return url;
}

/** A key prefix no other test uses, e.g. `sft-3f9a1c:`; pass it as the Redis prefix and as queue names' prefix. */
export function uniquePrefix(label = 'sft'): string {
  return `${label}-${randomBytes(4).toString('hex')}:`;
}
