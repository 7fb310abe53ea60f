import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { ServiceConfig } from '@stageflow/config';
import { connectionOptions } from '@stageflow/engine';
import Redis from 'ioredis';
import { SERVICE_CONFIG } from '../service-config';

/**
 * browser-host's own command connection for its registry. Commands wait through a
 * Redis restart (`maxRetriesPerRequest: null`, as the engine's), so teardown writes
 * are not lost to a blip; the connection closes last on shutdown.
 */
@Injectable()
export class BrowserHostRedis implements OnApplicationShutdown {
  private readonly log = new Logger('BrowserHostRedis');
  readonly client: Redis;
  private lastErrorLog = 0;

  constructor(@Inject(SERVICE_CONFIG) config: ServiceConfig) {
    this.client = new Redis(config.redis.url, { ...connectionOptions(), connectionName: 'stageflow-browser-host' });
    this.client.on('error', (error: Error) => {
      // One line per 5 s while Redis is away, not one per reconnect attempt.
      if (Date.now() - this.lastErrorLog < 5000) return;
      this.lastErrorLog = Date.now();
      this.log.warn({ msg: `Redis connection failed: ${error.message}; reconnecting` });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    // QUIT waits for a connection; one that is not ready would hold shutdown until Redis is back.
    if (this.client.status !== 'ready') return this.client.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
