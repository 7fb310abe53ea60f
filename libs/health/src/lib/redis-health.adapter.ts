import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { HEALTH_OPTIONS, HealthOptions } from './health.options';

/** How long a health probe waits for PONG; compose probes every few seconds. */
const PING_TIMEOUT_MS = 1000;

/** What `GET /health` asks of Redis. Tests pass a fake. */
export abstract class RedisHealthPort {
  /** Resolves true when Redis answered PING in time, false otherwise; never throws. */
  abstract ping(): Promise<boolean>;
  /** `host:port` of the Redis this process uses, without credentials, for messages. */
  abstract target(): string;
}

/**
 * One dedicated connection used only for health probes, so a busy or blocked
 * connection elsewhere never makes the service look down. A probe made while
 * (re)connecting waits for the connection up to {@link PING_TIMEOUT_MS};
 * `maxRetriesPerRequest: 1` drops queued probes after one failed reconnect, so
 * an outage cannot pile them up. ioredis keeps reconnecting meanwhile.
 */
@Injectable()
export class RedisHealthAdapter extends RedisHealthPort implements OnApplicationShutdown {
  private readonly log = new Logger(RedisHealthAdapter.name);
  private readonly redis: Redis;
  private readonly where: string;
  private reachable: boolean | undefined;

  constructor(@Inject(HEALTH_OPTIONS) options: HealthOptions) {
    super();
    const url = new URL(options.redisUrl);
    this.where = `${url.hostname}:${url.port || '6379'}`;
    this.redis = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      // ioredis arms this timer even for a socket that is already closed (Redis
      // away at shutdown), which would hold the process open for its default 2 s.
      disconnectTimeout: 500,
    });
    // Without an 'error' listener ioredis prints every failed reconnect; log
    // only the transitions so a Redis outage is two lines, not a flood.
    this.redis.on('error', (err: Error) => this.transition(false, err.message));
    this.redis.on('ready', () => this.transition(true));
  }

  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.redis.ping().then((r) => r === 'PONG'), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  target(): string {
    return this.where;
  }

  async onApplicationShutdown(): Promise<void> {
    // QUIT would wait in the offline queue while Redis is away; only a live connection gets one.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private transition(reachable: boolean, why?: string): void {
    if (this.reachable === reachable) return;
    this.reachable = reachable;
    if (reachable) this.log.log(`Redis at ${this.where} is reachable`);
    else this.log.warn(`Redis at ${this.where} is unreachable (${why}); retrying`);
  }
}
