/** Tuning of the WebSocket event stream; the defaults suit production, tests shorten the heartbeat. */
export interface EventsOptions {
  /** How long one tail read blocks in Redis before looping. @defaultValue 5000 */
  blockMs: number;
  /** Ping interval; a client that misses one pong is dropped (its tails closed). @defaultValue 30000 */
  heartbeatMs: number;
  /** Subscriptions one connection may hold (each holds a Redis connection). @defaultValue 32 */
  maxSubscriptions: number;
  /** Bytes queued to a slow client above which its subscriptions pause. @defaultValue 1 MiB */
  highWaterBytes: number;
}

export const EVENTS_OPTIONS = Symbol('EVENTS_OPTIONS');

export const DEFAULT_EVENTS_OPTIONS: EventsOptions = {
  blockMs: 5000,
  heartbeatMs: 30000,
  maxSubscriptions: 32,
  highWaterBytes: 1024 * 1024,
};

/** Path of the WebSocket (outside Nest's global prefix, so spelled out). */
export const WS_PATH = '/api/ws';
