import { RedisKeys } from '@stageflow/contracts';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { ProfileLeases } from '../lib/profile-leases.service';
import type { RunLiveness } from '../lib/lease.types';

/**
 * One test's view of Redis: a unique key prefix, as many ProfileLeases as the
 * test needs (each with its own connections, like separate processes), and a
 * raw client for reading and breaking state by hand. `dispose` closes them all
 * and deletes the prefix's keys.
 */
export class LeaseHarness {
  readonly prefix = uniquePrefix('sft-lease');
  readonly keys = new RedisKeys(this.prefix);
  readonly raw: Redis;
  private readonly opened: ProfileLeases[] = [];

  constructor() {
    this.raw = new Redis(testRedisUrl());
    this.raw.on('error', () => undefined);
  }

  /** A service with its own connections; `connect` replaces the URL (e.g. to keep hold of the clients). */
  leases(isRunAlive?: RunLiveness, connect?: () => Redis): ProfileLeases {
    const leases = new ProfileLeases({ redis: connect ?? testRedisUrl(), keys: this.keys, isRunAlive });
    this.opened.push(leases);
    return leases;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.opened.splice(0).map((l) => l.close()));
    let cursor = '0';
    do {
      const [next, found] = await this.raw.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 500);
      if (found.length) await this.raw.del(...found);
      cursor = next;
    } while (cursor !== '0');
    await this.raw.quit();
  }
}

/** A liveness oracle over a set of dead run ids the test can change. */
export function livenessExcept(dead: Set<string>): RunLiveness {
  return async (runId) => !dead.has(runId);
}

/** Resolves with the promise's value, or rejects after `ms` (only to bound a test, never inside the lib). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Tracks whether a promise has settled, without awaiting it. */
export function track<T>(promise: Promise<T>): { settled: () => boolean; promise: Promise<T> } {
  let done = false;
  const p = promise.finally(() => {
    done = true;
  });
  p.catch(() => undefined);
  return { settled: () => done, promise: p };
}
