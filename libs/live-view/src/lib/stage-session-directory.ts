import { RedisKeys, sessionRecordFromHash, type SessionRecord } from '@stageflow/contracts';
import type Redis from 'ioredis';

/**
 * Reads browser-host's registry of stage sessions (written by browser-host only):
 * whether a stage has an open browser, and where its tab is. The tab can change
 * ("Reopen browser tab"), so callers read it again rather than keep it.
 */
export class StageSessionDirectory {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** The session, or `undefined` when it is closed (or its record is unreadable). */
  async get(sessionId: string): Promise<SessionRecord | undefined> {
    return sessionRecordFromHash(await this.redis.hgetall(this.keys.hostSession(sessionId)));
  }

  /** The stage's open session of its latest attempt that has one, or `undefined`. */
  async openSessionOf(runId: string, stageId: string): Promise<SessionRecord | undefined> {
    const ids = await this.redis.smembers(this.keys.runBrowserSessions(runId));
    let latest: SessionRecord | undefined;
    for (const id of ids) {
      const record = await this.get(id);
      if (!record || record.runId !== runId || record.stageId !== stageId) continue;
      if (!latest || record.attempt > latest.attempt) latest = record;
    }
    return latest;
  }
}
