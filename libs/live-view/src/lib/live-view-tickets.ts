import {
  LIVE_VIEW_LIMITS,
  parseLiveViewTicketRecord,
  RedisKeys,
  type LiveViewMode,
  type LiveViewTicketRecord,
} from '@stageflow/contracts';
import type Redis from 'ioredis';
import {
  isRevokedBy,
  isTicketShaped,
  newTicket,
  ticketDigest,
  ticketOpens,
  ticketRecord,
  type TicketBinding,
  type TicketRevocation,
} from './ticket-rules';

export interface LiveViewTicketsOptions {
  /** How long an unused ticket lives. @defaultValue {@link LIVE_VIEW_LIMITS.ticketTtlSeconds} */
  ttlSeconds?: number;
  /** @defaultValue `Date.now` */
  now?: () => number;
}

export interface IssuedTicket {
  ticket: string;
  record: LiveViewTicketRecord;
}

/**
 * Live-view tickets in Redis. The api issues them; live-view-relay consumes them
 * (once: `GETDEL`) when a viewer connects, and revokes the unused ones when the gate
 * is answered or the stage or run ends. Redis holds the ticket's SHA-256, never the
 * ticket, and expires it after its TTL.
 */
export class LiveViewTickets {
  private readonly ttlSeconds: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    options: LiveViewTicketsOptions = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? LIVE_VIEW_LIMITS.ticketTtlSeconds;
    this.now = options.now ?? Date.now;
  }

  async issue(binding: TicketBinding, mode: LiveViewMode): Promise<IssuedTicket> {
    const ticket = newTicket();
    const digest = ticketDigest(ticket);
    const record = ticketRecord(binding, mode, this.now(), this.ttlSeconds);
    const index = this.keys.runLiveViewTickets(binding.runId);
    await this.redis
      .multi()
      .set(this.keys.liveViewTicket(digest), JSON.stringify(record), 'PX', this.ttlSeconds * 1000)
      .sadd(index, digest)
      // The index outlives its newest ticket a little; revocation drops entries of expired ones.
      .pexpire(index, (this.ttlSeconds + 60) * 1000)
      .exec()
      .then(failOnError);
    return { ticket, record };
  }

  /**
   * Takes the ticket (it can never be used again, whatever the answer) and returns
   * its record when it opens the view at `path`; `undefined` when it is malformed,
   * unknown, used, expired, revoked or for another stage. The reasons are not told
   * apart on purpose: a guesser learns nothing.
   */
  async consume(ticket: unknown, path: { runId: string; stageId: string }): Promise<LiveViewTicketRecord | undefined> {
    if (!isTicketShaped(ticket)) return undefined;
    const digest = ticketDigest(ticket);
    const raw = await this.redis.getdel(this.keys.liveViewTicket(digest));
    if (raw === null) return undefined;
    let record: LiveViewTicketRecord;
    try {
      record = parseLiveViewTicketRecord(JSON.parse(raw));
    } catch {
      return undefined;
    }
    await this.redis.srem(this.keys.runLiveViewTickets(record.runId), digest);
    return ticketOpens(record, path, this.now()) ? record : undefined;
  }

  /** Deletes the unused tickets the revocation covers; returns how many. */
  async revoke(revocation: TicketRevocation): Promise<number> {
    const index = this.keys.runLiveViewTickets(revocation.runId);
    const digests = await this.redis.smembers(index);
    let revoked = 0;
    for (const digest of digests) {
      const key = this.keys.liveViewTicket(digest);
      const raw = await this.redis.get(key);
      let record: LiveViewTicketRecord | undefined;
      try {
        record = raw === null ? undefined : parseLiveViewTicketRecord(JSON.parse(raw));
      } catch {
        record = undefined;
      }
      if (record && !isRevokedBy(record, revocation)) continue;
      // Gone (used or expired), unreadable, or covered: out of the index, and the ticket deleted.
      const [[, deleted]] = (await this.redis.multi().del(key).srem(index, digest).exec().then(failOnError)) as [[null, number], unknown];
      if (record && deleted === 1) revoked += 1;
    }
    return revoked;
  }
}

function failOnError(results: [Error | null, unknown][] | null): [Error | null, unknown][] {
  if (!results) throw new Error('The Redis transaction was discarded');
  for (const [error] of results) if (error) throw error;
  return results;
}
