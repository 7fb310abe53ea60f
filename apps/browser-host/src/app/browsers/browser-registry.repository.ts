import { Inject, Injectable, Logger } from '@nestjs/common';
import { RedisKeys } from '@stageflow/contracts';
import { BrowserHostRedis } from './browser-host.redis';
import { BROWSER_SETTINGS, type BrowserSettings } from './browser-host.tokens';
import { browserRecordFromHash, browserRecordToHash, type BrowserRecord } from './browser-record';

/**
 * The browser registry in Redis: one hash per browser, indexed per host (for the
 * startup sweep) and per run (for the run's teardown). Only this host's browsers are
 * returned; another host's records are its own business.
 */
@Injectable()
export class BrowserRegistry {
  private readonly log = new Logger('BrowserRegistry');

  constructor(
    private readonly redis: BrowserHostRedis,
    private readonly keys: RedisKeys,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  async put(record: BrowserRecord): Promise<void> {
    const key = this.keys.hostBrowser(record.browserId);
    await this.redis.client
      .multi()
      .del(key)
      .hset(key, browserRecordToHash(record))
      .sadd(this.keys.hostBrowsers(record.hostId), record.browserId)
      .sadd(this.keys.runBrowsers(record.runId), record.browserId)
      .exec();
  }

  async get(browserId: string): Promise<BrowserRecord | undefined> {
    const record = browserRecordFromHash(await this.redis.client.hgetall(this.keys.hostBrowser(browserId)));
    return record?.hostId === this.settings.hostId ? record : undefined;
  }

  async setLeaseToken(browserId: string, token: number): Promise<void> {
    await this.redis.client.hset(this.keys.hostBrowser(browserId), 'leaseToken', String(token));
  }

  async remove(record: Pick<BrowserRecord, 'browserId' | 'runId' | 'hostId'>): Promise<void> {
    await this.redis.client
      .multi()
      .del(this.keys.hostBrowser(record.browserId))
      .srem(this.keys.hostBrowsers(record.hostId), record.browserId)
      .srem(this.keys.runBrowsers(record.runId), record.browserId)
      .exec();
  }

  /** Every browser this host registered. Index entries without a readable record are dropped. */
  async ofHost(): Promise<BrowserRecord[]> {
    return this.load(this.keys.hostBrowsers(this.settings.hostId));
  }

  async ofRun(runId: string): Promise<BrowserRecord[]> {
    return this.load(this.keys.runBrowsers(runId));
  }

  private async load(indexKey: string): Promise<BrowserRecord[]> {
    const ids = await this.redis.client.smembers(indexKey);
    const records: BrowserRecord[] = [];
    for (const id of ids) {
      const hash = await this.redis.client.hgetall(this.keys.hostBrowser(id));
      const record = browserRecordFromHash(hash);
      if (record) {
        if (record.hostId === this.settings.hostId) records.push(record);
        continue;
      }
      if (Object.keys(hash).length > 0) this.log.warn({ msg: 'Ignoring a malformed browser record', browserId: id });
      await this.redis.client.srem(indexKey, id);
    }
    return records;
  }
}
