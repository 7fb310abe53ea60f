import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type Redis from 'ioredis';
import { RedisKeys } from '@stageflow/contracts';
import { EngineRedis } from '../store/redis.adapter';

/**
 * "Stop this run's processes" over Redis pub/sub (`RedisKeys.cancelChannel()`).
 * The engine publishes when a run is cancelled, fails or is abandoned while
 * stages may be running; every runner subscribes and kills the process groups
 * of that run. Pub/sub is fire-and-forget: runners also poll their stages'
 * state (see the runner's stage watch), so a message lost in a Redis restart
 * only delays the kill.
 */
@Injectable()
export class CancelBus implements OnApplicationShutdown {
  private readonly logger = new Logger('CancelBus');
  private subscriber?: Redis;

  constructor(
    private readonly redis: EngineRedis,
    private readonly keys: RedisKeys,
  ) {}

  async publish(runId: string): Promise<void> {
    try {
      await this.redis.client.publish(this.keys.cancelChannel(), JSON.stringify({ runId }));
    } catch (error) {
      this.logger.warn({ runId, msg: `could not publish cancel: ${(error as Error).message}` });
    }
  }

  /** Calls `onCancel(runId)` for every cancel message; one subscription per process. */
  async subscribe(onCancel: (runId: string) => void): Promise<void> {
    if (this.subscriber) throw new Error('CancelBus.subscribe may be called once');
    const channel = this.keys.cancelChannel();
    this.subscriber = this.redis.dedicated('cancel-subscriber');
    this.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const runId = parseRunId(message);
      if (runId) onCancel(runId);
      else this.logger.warn({ msg: 'ignored a malformed cancel message' });
    });
    await this.subscriber.subscribe(channel);
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
  }
}

/** Validates a cancel message where it enters the process. */
export function parseRunId(message: string): string | undefined {
  try {
    const parsed = JSON.parse(message) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const runId = (parsed as Record<string, unknown>)['runId'];
    return typeof runId === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(runId) ? runId : undefined;
  } catch {
    return undefined;
  }
}
