import { DynamicModule, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { RedisConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import Redis from 'ioredis';
import { LiveViewTickets } from './live-view-tickets';
import { StageSessionDirectory } from './stage-session-directory';

/** Nest token of the module's own Redis connection (closed at shutdown). */
export const LIVE_VIEW_REDIS = Symbol('LIVE_VIEW_REDIS');

class RedisCloser implements OnApplicationShutdown {
  constructor(private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    // QUIT waits for a connection; one that is not ready would hold shutdown until Redis is back.
    if (this.redis.status === 'wait') return;
    if (this.redis.status !== 'ready') return this.redis.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * {@link LiveViewTickets} and {@link StageSessionDirectory} on one Redis connection of
 * their own. A request fails after a few retries instead of waiting for Redis to come
 * back: a viewer is waiting for the answer.
 */
@Module({})
export class LiveViewModule {
  static forRoot(redis: RedisConfig): DynamicModule {
    const keys = new RedisKeys(redis.prefix);
    return {
      module: LiveViewModule,
      providers: [
        {
          provide: LIVE_VIEW_REDIS,
          useFactory: () => {
            // Lazy: a process that never issues or checks a ticket never connects.
            const client = new Redis(redis.url, { maxRetriesPerRequest: 2, lazyConnect: true, connectionName: 'stageflow-live-view' });
            // Reported by the failing command; without a listener ioredis would print every reconnect.
            client.on('error', () => undefined);
            return client;
          },
        },
        { provide: RedisCloser, useFactory: (client: Redis) => new RedisCloser(client), inject: [LIVE_VIEW_REDIS] },
        { provide: LiveViewTickets, useFactory: (client: Redis) => new LiveViewTickets(client, keys), inject: [LIVE_VIEW_REDIS] },
        { provide: StageSessionDirectory, useFactory: (client: Redis) => new StageSessionDirectory(client, keys), inject: [LIVE_VIEW_REDIS] },
      ],
      exports: [LiveViewTickets, StageSessionDirectory],
    };
  }
}
