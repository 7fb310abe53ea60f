import { Inject, Injectable, Logger } from '@nestjs/common';
import { RedisKeys } from '@stageflow/contracts';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import { BROWSER_SETTINGS, type BrowserSettings } from '../browsers/browser-host.tokens';
import { sessionRecordFromHash, sessionRecordToHash, type BlockedRequest, type SessionRecord } from './session-record';

/** Stage sessions in Redis: one hash each, indexed per host (startup sweep) and per run (teardown). */
@Injectable()
export class SessionRegistry {
  private readonly log = new Logger('SessionRegistry');

  constructor(
    private readonly redis: BrowserHostRedis,
    private readonly keys: RedisKeys,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  async put(record: SessionRecord): Promise<void> {
    const key = this.keys.hostSession(record.sessionId);
    await this.redis.client
      .multi()
      .del(key)
      .hset(key, sessionRecordToHash(record))
      .sadd(this.keys.hostSessions(record.hostId), record.sessionId)
      .sadd(this.keys.runBrowserSessions(record.runId), record.sessionId)
      .exec();
  }

  async get(sessionId: string): Promise<SessionRecord | undefined> {
    const record = sessionRecordFromHash(await this.redis.client.hgetall(this.keys.hostSession(sessionId)));
    return record?.hostId === this.settings.hostId ? record : undefined;
  }

  /** Rewrites the blocked-request list (this process is its only writer). */
  async setBlocked(sessionId: string, blocked: readonly BlockedRequest[]): Promise<void> {
    const key = this.keys.hostSession(sessionId);
    // Only while the session exists: a late report must not resurrect a closed one.
    if (await this.redis.client.exists(key)) await this.redis.client.hset(key, 'blocked', JSON.stringify(blocked));
  }

  async remove(record: Pick<SessionRecord, 'sessionId' | 'runId' | 'hostId'>): Promise<void> {
    await this.redis.client
      .multi()
      .del(this.keys.hostSession(record.sessionId))
      .srem(this.keys.hostSessions(record.hostId), record.sessionId)
      .srem(this.keys.runBrowserSessions(record.runId), record.sessionId)
      .exec();
  }

  async ofHost(): Promise<SessionRecord[]> {
    return this.load(this.keys.hostSessions(this.settings.hostId));
  }

  async ofRun(runId: string): Promise<SessionRecord[]> {
    return this.load(this.keys.runBrowserSessions(runId));
  }

  private async load(indexKey: string): Promise<SessionRecord[]> {
    const ids = await this.redis.client.smembers(indexKey);
    const records: SessionRecord[] = [];
    for (const id of ids) {
      const hash = await this.redis.client.hgetall(this.keys.hostSession(id));
      const record = sessionRecordFromHash(hash);
      if (record) {
        if (record.hostId === this.settings.hostId) records.push(record);
        continue;
      }
      if (Object.keys(hash).length > 0) this.log.warn({ msg: 'Ignoring a malformed stage session record', sessionId: id });
      await this.redis.client.srem(indexKey, id);
    }
    return records;
  }
}
