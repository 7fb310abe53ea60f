import type { StartedTestContainer } from 'testcontainers';

/** Stops the Redis of the global setup (there is no reaper: ryuk is disabled here). */
export default async function teardown(): Promise<void> {
  const container = (globalThis as Record<string, unknown>)['__SF_REDIS_CONTAINER__'] as StartedTestContainer | undefined;
  await container?.stop({ timeout: 2000 });
}
