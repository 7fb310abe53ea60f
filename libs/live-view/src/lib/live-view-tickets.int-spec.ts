import { RedisKeys, sessionRecordToHash, type SessionRecord } from '@stageflow/contracts';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { LiveViewTickets } from './live-view-tickets';
import { StageSessionDirectory } from './stage-session-directory';
import { ticketDigest } from './ticket-rules';

/** Tickets and the session directory against real Redis (each test its own prefix). */
describe('live-view tickets on Redis', () => {
  let redis: Redis;
  let keys: RedisKeys;
  let now: number;
  let tickets: LiveViewTickets;
  const binding = { runId: 'r1', stageId: 'login', attempt: 1, sessionId: 'sf-r1-login-1' };
  const path = { runId: 'r1', stageId: 'login' };

  beforeAll(() => {
    redis = new Redis(testRedisUrl());
  });
  afterAll(() => redis.quit());

  beforeEach(() => {
    keys = new RedisKeys(uniquePrefix('sft-lv'));
    now = Date.now();
    tickets = new LiveViewTickets(redis, keys, { ttlSeconds: 60, now: () => now });
  });
  afterEach(async () => {
    const found = await redis.keys(`${keys.prefix}*`);
    if (found.length) await redis.del(...found);
  });

  it('opens a view once: a second use of the same ticket is refused', async () => {
    const { ticket, record } = await tickets.issue(binding, 'interactive');
    expect(await tickets.consume(ticket, path)).toEqual(record);
    expect(await tickets.consume(ticket, path)).toBeUndefined();
    expect(await redis.smembers(keys.runLiveViewTickets('r1'))).toEqual([]);
  });

  it('keeps only a digest in Redis, with a TTL', async () => {
    const { ticket } = await tickets.issue(binding, 'view-only');
    const stored = await redis.keys(`${keys.prefix}*`);
    expect(stored.join(' ')).not.toContain(ticket);
    for (const key of stored) {
      const value = (await redis.type(key)) === 'set' ? (await redis.smembers(key)).join(' ') : await redis.get(key);
      expect(value).not.toContain(ticket);
    }
    const ttl = await redis.pttl(keys.liveViewTicket(ticketDigest(ticket)));
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('refuses an expired ticket: by its record before Redis drops it, and after', async () => {
    const { ticket } = await tickets.issue(binding, 'interactive');
    now += 60_000;
    expect(await tickets.consume(ticket, path)).toBeUndefined();

    const short = new LiveViewTickets(redis, keys, { ttlSeconds: 1 });
    const second = await short.issue(binding, 'interactive');
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await redis.exists(keys.liveViewTicket(ticketDigest(second.ticket)))).toBe(0);
    expect(await short.consume(second.ticket, path)).toBeUndefined();
  });

  it('refuses a ticket for another stage, and burns it', async () => {
    const { ticket } = await tickets.issue(binding, 'interactive');
    expect(await tickets.consume(ticket, { runId: 'r1', stageId: 'other' })).toBeUndefined();
    expect(await tickets.consume(ticket, path)).toBeUndefined();
  });

  it('refuses malformed and unknown tickets without guessing', async () => {
    expect(await tickets.consume('nope', path)).toBeUndefined();
    expect(await tickets.consume('A'.repeat(43), path)).toBeUndefined();
    expect(await tickets.consume(undefined, path)).toBeUndefined();
  });

  it('revokes what a gate answer, a stage end and a run end cover', async () => {
    const interactive = await tickets.issue(binding, 'interactive');
    const viewOnly = await tickets.issue(binding, 'view-only');
    const otherStage = await tickets.issue({ ...binding, stageId: 'work', sessionId: 'sf-r1-work-1' }, 'view-only');
    const otherRun = await tickets.issue({ ...binding, runId: 'r2', sessionId: 'sf-r2-login-1' }, 'interactive');

    expect(await tickets.revoke({ runId: 'r1', stageId: 'login', mode: 'interactive' })).toBe(1);
    expect(await tickets.consume(interactive.ticket, path)).toBeUndefined();
    expect(await tickets.revoke({ runId: 'r1', stageId: 'login', attempt: 1 })).toBe(1);
    expect(await tickets.consume(viewOnly.ticket, path)).toBeUndefined();
    expect(await tickets.revoke({ runId: 'r1' })).toBe(1);
    expect(await tickets.consume(otherStage.ticket, { runId: 'r1', stageId: 'work' })).toBeUndefined();
    expect(await redis.exists(keys.runLiveViewTickets('r1'))).toBe(0);

    expect(await tickets.consume(otherRun.ticket, { runId: 'r2', stageId: 'login' })).toMatchObject({ runId: 'r2' });
  });
});

describe('the stage session directory', () => {
  it('finds the open session of a stage\'s latest attempt, as browser-host registered it', async () => {
    const redis = new Redis(testRedisUrl());
    const keys = new RedisKeys(uniquePrefix('sft-lvs'));
    const record = (stageId: string, attempt: number): SessionRecord => ({
      sessionId: `sf-r1-${stageId}-${attempt}`,
      hostId: 'local',
      runId: 'r1',
      stageId,
      attempt,
      kind: 'shared',
      browserId: 'sb-1',
      targetId: `T${stageId}${attempt}`,
      cdpEndpoint: 'ws://127.0.0.1:9/devtools/browser/x',
      socketDir: '/tmp/x',
      headedMode: 'headless',
      openedAt: new Date().toISOString(),
      blocked: [],
    });
    try {
      for (const r of [record('login', 1), record('login', 2), record('work', 1)]) {
        await redis.hset(keys.hostSession(r.sessionId), sessionRecordToHash(r));
        await redis.sadd(keys.runBrowserSessions('r1'), r.sessionId);
      }
      await redis.sadd(keys.runBrowserSessions('r1'), 'sf-r1-gone-1');
      const directory = new StageSessionDirectory(redis, keys);
      expect((await directory.openSessionOf('r1', 'login'))?.sessionId).toBe('sf-r1-login-2');
      expect((await directory.openSessionOf('r1', 'work'))?.targetId).toBe('Twork1');
      expect(await directory.openSessionOf('r1', 'gone')).toBeUndefined();
      expect(await directory.openSessionOf('r9', 'login')).toBeUndefined();
      expect(await directory.get('sf-r1-login-1')).toMatchObject({ attempt: 1 });
    } finally {
      const found = await redis.keys(`${keys.prefix}*`);
      if (found.length) await redis.del(...found);
      await redis.quit();
    }
  });
});
