/** Answers whether Redis is reachable; behind a token so unit tests use a fake. */
export interface RedisProbe {
  ping(): Promise<boolean>;
}

export const REDIS_PROBE = Symbol('REDIS_PROBE');
