import { Inject, Injectable } from '@nestjs/common';
import { RedisKeys } from '@stageflow/contracts';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import { BROWSER_SETTINGS, type BrowserSettings } from '../browsers/browser-host.tokens';
import { pendingAuditFromHash, pendingAuditToHash, type PendingAllowlistAudit } from './allowlist-audit-record';

/** A run's audited hosts outlive a late report at most this long (the set is also dropped at the run's end). */
const AUDITED_HOSTS_TTL_S = 7 * 24 * 3600;

/**
 * Pending soft allowlist audits in Redis: one hash per session, indexed per host in a
 * sorted set scored by when the runner's report is overdue (`+inf` while the session is
 * open); and per run, the (stage, host) pairs already recorded.
 */
@Injectable()
export class AllowlistAuditRepository {
  constructor(
    private readonly redis: BrowserHostRedis,
    private readonly keys: RedisKeys,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  /** Expects a report for the session (again, when the same attempt was opened anew). */
  async put(audit: PendingAllowlistAudit): Promise<void> {
    const key = this.keys.hostAllowlistAudit(audit.sessionId);
    await this.redis.client
      .multi()
      .del(key)
      .hset(key, pendingAuditToHash(audit))
      .zadd(this.keys.hostAllowlistAudits(audit.hostId), '+inf', audit.sessionId)
      .exec();
  }

  /** The report is overdue at `at` (ms); only for an audit still pending. */
  async dueAt(sessionId: string, at: number): Promise<void> {
    await this.redis.client.zadd(this.keys.hostAllowlistAudits(this.settings.hostId), 'XX', at, sessionId);
  }

  /**
   * Removes the pending audit and returns it; `undefined` when there was none. Atomic, so
   * a report and the overdue sweep never both act on one session.
   */
  async take(sessionId: string): Promise<PendingAllowlistAudit | undefined> {
    const key = this.keys.hostAllowlistAudit(sessionId);
    const replies = await this.redis.client
      .multi()
      .hgetall(key)
      .del(key)
      .zrem(this.keys.hostAllowlistAudits(this.settings.hostId), sessionId)
      .exec();
    const [error, hash] = replies?.[0] ?? [new Error('the transaction was discarded'), undefined];
    if (error) throw error;
    const audit = pendingAuditFromHash(hash as Record<string, string>);
    return audit?.hostId === this.settings.hostId ? audit : undefined;
  }

  /** Session ids whose report was due by `now`, oldest first. */
  overdue(now: number, limit = 100): Promise<string[]> {
    return this.redis.client.zrangebyscore(this.keys.hostAllowlistAudits(this.settings.hostId), '-inf', now, 'LIMIT', 0, limit);
  }

  /** Session ids still waiting for their session to close. */
  open(): Promise<string[]> {
    return this.redis.client.zrangebyscore(this.keys.hostAllowlistAudits(this.settings.hostId), '+inf', '+inf');
  }

  /** True the first time a stage of the run is recorded for the host. */
  async firstForStage(runId: string, stageId: string, host: string): Promise<boolean> {
    const key = this.keys.runAllowlistHosts(runId);
    const replies = await this.redis.client.multi().sadd(key, `${stageId} ${host}`).expire(key, AUDITED_HOSTS_TTL_S).exec();
    const [error, added] = replies?.[0] ?? [new Error('the transaction was discarded'), 0];
    if (error) throw error;
    return added === 1;
  }

  /** Undoes {@link firstForStage} when the record could not be written, so a later report may write it. */
  async forgetForStage(runId: string, stageId: string, host: string): Promise<void> {
    await this.redis.client.srem(this.keys.runAllowlistHosts(runId), `${stageId} ${host}`);
  }

  async forgetRun(runId: string): Promise<void> {
    await this.redis.client.del(this.keys.runAllowlistHosts(runId));
  }
}
