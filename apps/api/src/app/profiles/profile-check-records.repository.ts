import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { parseLoginCheckRequest, RedisKeys, type LoginCheckRequest } from '@stageflow/contracts';
import type Redis from 'ioredis';

/** The last "Check now" of a profile, as stored. */
export interface LastProfileCheck {
  loggedIn: boolean;
  url: string;
  checkedAt: string;
}

/** What the api keeps about a profile's login check. */
export interface ProfileCheckRecord {
  /** The default check ("Check now" without a body). */
  check?: LoginCheckRequest;
  last?: LastProfileCheck;
}

/**
 * Where a profile's default check and last result are kept (Redis, one hash
 * per profile); a port so the profile service is unit-tested without Redis.
 */
export abstract class ProfileCheckRecords {
  abstract read(scope: string, names: readonly string[]): Promise<ProfileCheckRecord[]>;
  abstract saveCheck(scope: string, name: string, check: LoginCheckRequest): Promise<void>;
  abstract saveLast(scope: string, name: string, last: LastProfileCheck): Promise<void>;
  /** Forgets both (the profile was deleted). */
  abstract remove(scope: string, name: string): Promise<void>;
}

export const PROFILE_CHECK_REDIS = Symbol('PROFILE_CHECK_REDIS');

/** Reads a stored result back where it enters the process; undefined when it is not one. */
export function parseLastCheck(raw: unknown): LastProfileCheck | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  if (typeof r['loggedIn'] !== 'boolean' || typeof r['url'] !== 'string' || typeof r['checkedAt'] !== 'string') return undefined;
  if (Number.isNaN(Date.parse(r['checkedAt']))) return undefined;
  return { loggedIn: r['loggedIn'], url: r['url'], checkedAt: r['checkedAt'] };
}

@Injectable()
export class RedisProfileCheckRecords extends ProfileCheckRecords implements OnApplicationShutdown {
  private readonly log = new Logger('ProfileCheckRecords');

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    super();
  }

  async read(scope: string, names: readonly string[]): Promise<ProfileCheckRecord[]> {
    if (names.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const name of names) pipeline.hmget(this.keys.profileCheck(scope, name), 'check', 'last');
    const replies = (await pipeline.exec()) ?? [];
    return names.map((name, i) => {
      const [error, value] = replies[i] ?? [new Error('no reply')];
      if (error) throw error;
      const [check, last] = value as [string | null, string | null];
      return { ...this.decode(name, 'check', check), ...this.decode(name, 'last', last) };
    });
  }

  async saveCheck(scope: string, name: string, check: LoginCheckRequest): Promise<void> {
    await this.redis.hset(this.keys.profileCheck(scope, name), 'check', JSON.stringify(check));
  }

  async saveLast(scope: string, name: string, last: LastProfileCheck): Promise<void> {
    await this.redis.hset(this.keys.profileCheck(scope, name), 'last', JSON.stringify(last));
  }

  async remove(scope: string, name: string): Promise<void> {
    await this.redis.del(this.keys.profileCheck(scope, name));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status !== 'ready') return this.redis.disconnect();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** A value written by hand or by an older version is left out (and logged), never guessed at. */
  private decode(name: string, field: 'check' | 'last', text: string | null): ProfileCheckRecord {
    if (text === null) return {};
    try {
      const value: unknown = JSON.parse(text);
      if (field === 'check') return { check: parseLoginCheckRequest(value) };
      const last = parseLastCheck(value);
      if (last) return { last };
    } catch {
      // Reported below.
    }
    this.log.warn({ msg: `The stored ${field} of profile ${name} is not valid; it is ignored until set again`, profile: name });
    return {};
  }
}
