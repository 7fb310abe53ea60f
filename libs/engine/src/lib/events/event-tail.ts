import type Redis from 'ioredis';
import type { RedisKeys, RunEvent } from '@stageflow/contracts';
import type { CursorEvent, EventTailApi } from '../engine.api';
import { decodeEvent } from '../store/run.store';

const READ_COUNT = 500;

type StreamReply = [string, [string, string[]][]][] | null;

/**
 * Live events over a dedicated connection (blocking XREAD). One per
 * subscriber; `close()` ends its connection.
 */
export class EventTail implements EventTailApi {
  /** Where "only new events" starts, fixed at the first call so later calls miss nothing. */
  private allCursor?: string;

  constructor(
    private readonly conn: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async tailRun(runId: string, afterSeq: number, blockMs: number): Promise<RunEvent[]> {
    const reply = (await this.conn.xread(
      'COUNT',
      READ_COUNT,
      'BLOCK',
      Math.max(1, blockMs),
      'STREAMS',
      this.keys.runEvents(runId),
      `${Math.max(0, Math.trunc(afterSeq))}-0`,
    )) as StreamReply;
    return (reply?.[0]?.[1] ?? []).map(([, fields]) => decodeEvent(fields));
  }

  async tailAll(afterCursor: string | undefined, blockMs: number): Promise<CursorEvent[]> {
    let from = afterCursor === '0' ? '0-0' : afterCursor;
    if (from === undefined) {
      this.allCursor ??= await this.lastAllId();
      from = this.allCursor;
    }
    const reply = (await this.conn.xread(
      'COUNT',
      READ_COUNT,
      'BLOCK',
      Math.max(1, blockMs),
      'STREAMS',
      this.keys.allEvents(),
      from,
    )) as StreamReply;
    const events = (reply?.[0]?.[1] ?? []).map(([id, fields]) => ({ cursor: id, event: decodeEvent(fields) }));
    if (afterCursor === undefined && events.length) this.allCursor = events[events.length - 1].cursor;
    return events;
  }

  async close(): Promise<void> {
    this.conn.disconnect();
  }

  private async lastAllId(): Promise<string> {
    const last = await this.conn.xrevrange(this.keys.allEvents(), '+', '-', 'COUNT', 1);
    return last[0]?.[0] ?? '0-0';
  }
}
