import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis, { RedisOptions, Result } from 'ioredis';
import { ENGINE_REDIS_CONFIG } from '../engine.tokens';
import type { EngineRedisConfig } from '../engine.options';
import { COMMIT_LUA, LOAD_PLAN_LUA, UNLOCK_LUA } from './redis.scripts';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    sfCommit(numKeys: number, ...args: string[]): Result<unknown, Context>;
    sfUnlock(key: string, token: string): Result<number, Context>;
    sfLoadPlan(numKeys: number, ...args: string[]): Result<unknown[], Context>;
  }
}

/**
 * Options for every Stageflow connection. `maxRetriesPerRequest: null` makes
 * commands wait through a Redis restart instead of failing (BullMQ requires it
 * for workers, and the engine wants it so no state write is lost to an outage).
 */
export function connectionOptions(): RedisOptions {
  return {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    // Reconnect quickly at first, then every 2 s at most, forever.
    retryStrategy: (times) => Math.min(50 * times, 2000),
  };
}

/**
 * The engine's Redis connections: one shared command connection (non
 * blocking), plus dedicated ones for blocking reads and subscriptions.
 */
@Injectable()
export class EngineRedis implements OnApplicationShutdown {
  private readonly logger = new Logger('EngineRedis');
  readonly client: Redis;
  private readonly extra = new Set<Redis>();
  private lastErrorLog = 0;

  constructor(@Inject(ENGINE_REDIS_CONFIG) private readonly config: EngineRedisConfig) {
    this.client = this.connect('command');
  }

  /** A connection of its own (blocking XREAD, SUBSCRIBE, BullMQ); closed with the module unless closed before. */
  dedicated(name: string): Redis {
    const conn = this.connect(name);
    this.extra.add(conn);
    conn.once('end', () => this.extra.delete(conn));
    return conn;
  }

  /** True when Redis answers PING within `timeoutMs`. */
  async ping(timeoutMs = 1000): Promise<boolean> {
    if (this.client.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('ping timed out')), timeoutMs);
      });
      return (await Promise.race([this.client.ping(), timeout])) === 'PONG';
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** True once the connections were closed on purpose (shutdown): nothing is worth retrying then. */
  get closed(): boolean {
    return this.client.status === 'end';
  }

  // Last of all the shutdown hooks: the stage worker finishes its jobs (which
  // write to Redis) in beforeApplicationShutdown, before this runs.
  async onApplicationShutdown(): Promise<void> {
    for (const conn of [...this.extra]) conn.disconnect();
    await this.client.quit().catch(() => this.client.disconnect());
  }

  private connect(name: string): Redis {
    const conn = new Redis(this.config.url, { ...connectionOptions(), connectionName: `stageflow-${name}` });
    conn.defineCommand('sfCommit', { lua: COMMIT_LUA });
    conn.defineCommand('sfUnlock', { lua: UNLOCK_LUA, numberOfKeys: 1 });
    conn.defineCommand('sfLoadPlan', { lua: LOAD_PLAN_LUA });
    // Without a listener ioredis prints every reconnect error; log at most one
    // line per 5 s while Redis is away.
    conn.on('error', (error: Error) => {
      const now = Date.now();
      if (now - this.lastErrorLog < 5000) return;
      this.lastErrorLog = now;
      this.logger.warn({ msg: `Redis connection "${name}" failed: ${error.message}; reconnecting` });
    });
    return conn;
  }
}
