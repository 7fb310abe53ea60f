/**
 * Starts one real Redis for the whole integration run and hands its URL to the
 * tests as STAGEFLOW_TEST_REDIS_URL (tests isolate themselves by key prefix).
 * An already running Redis can be used instead by exporting
 * STAGEFLOW_TEST_REDIS_URL before the run.
 */
import { GenericContainer, Wait } from 'testcontainers';

export default async function setup(): Promise<void> {
  if (process.env['STAGEFLOW_TEST_REDIS_URL']) return;
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const container = await new GenericContainer('redis:7-bookworm')
    .withCommand(['redis-server', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  process.env['STAGEFLOW_TEST_REDIS_URL'] = `redis://${container.getHost()}:${container.getMappedPort(6379)}`;
  (globalThis as Record<string, unknown>)['__SF_REDIS_CONTAINER__'] = container;
}
