import { Logger } from '@nestjs/common';
import type { ServiceConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import type { BrowserSettings } from '../browsers/browser-host.tokens';
import { deleteKeys } from '../browsers/testing/browser-host.harness';
import type { PendingAllowlistAudit } from './allowlist-audit-record';
import { AllowlistAuditRepository } from './allowlist-audits.repository';
import { AllowlistAudits, REPORT_OVERDUE } from './allowlist-audits.service';
import type { SessionRegistry } from './session-registry.repository';
import { MemoryAuditLog, NotedActivity } from './testing/memory-allowlist-audits';

/**
 * The pending soft allowlist audits on real Redis (no browser): the sorted-set index,
 * the atomic take a report and the overdue check race for, and the per-run host memory.
 */
beforeAll(() => Logger.overrideLogger(false));

const settings = { hostId: 'it-audit' } as BrowserSettings;
const pending = (stageId: string, attempt = 1): PendingAllowlistAudit => ({
  sessionId: `sf-r1-${stageId}-${attempt}`,
  hostId: 'it-audit',
  runId: 'r1',
  stageId,
  attempt,
  profile: 'github',
  scope: 'local',
  allowDomains: ['127.0.0.1', '*.example.test'],
});

describe('allowlist audits on Redis', () => {
  let redis: BrowserHostRedis;
  let keys: RedisKeys;
  let repo: AllowlistAuditRepository;

  beforeEach(() => {
    keys = new RedisKeys(uniquePrefix());
    redis = new BrowserHostRedis({ redis: { url: testRedisUrl(), prefix: keys.prefix } } as ServiceConfig);
    repo = new AllowlistAuditRepository(redis, keys, settings);
  });
  afterEach(async () => {
    await deleteKeys(testRedisUrl(), keys.prefix);
    await redis.onApplicationShutdown();
  });

  it('keeps a pending audit open until its session closes, then due at the grace, and gives it to one taker only', async () => {
    await repo.put(pending('a'));
    await repo.put(pending('b'));
    expect((await repo.open()).sort()).toEqual(['sf-r1-a-1', 'sf-r1-b-1']);
    expect(await repo.overdue(Date.now() + 3600_000)).toEqual([]);
    await repo.dueAt('sf-r1-a-1', 1000);
    // Only an audit still pending gets a due time: a late close must not bring one back.
    await repo.dueAt('sf-r1-gone-1', 1000);
    expect(await repo.overdue(1000)).toEqual(['sf-r1-a-1']);
    expect(await repo.open()).toEqual(['sf-r1-b-1']);
    const [first, second] = await Promise.all([repo.take('sf-r1-a-1'), repo.take('sf-r1-a-1')]);
    expect([first, second].filter(Boolean)).toEqual([pending('a')]);
    expect(await redis.client.exists(keys.hostAllowlistAudit('sf-r1-a-1'))).toBe(0);
    expect(await repo.overdue(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });

  it('opens an attempt anew with a fresh audit that waits for its close again', async () => {
    await repo.put(pending('a'));
    await repo.dueAt('sf-r1-a-1', 1000);
    await repo.put({ ...pending('a'), allowDomains: ['other.test'] });
    expect(await repo.overdue(Date.now())).toEqual([]);
    expect((await repo.take('sf-r1-a-1'))?.allowDomains).toEqual(['other.test']);
  });

  it('remembers a (stage, host) pair of a run once, for a week, until the run ends', async () => {
    expect(await repo.firstForStage('r1', 'work', 'localhost')).toBe(true);
    expect(await repo.firstForStage('r1', 'work', 'localhost')).toBe(false);
    expect(await repo.firstForStage('r1', 'peer', 'localhost')).toBe(true);
    const ttl = await redis.client.ttl(keys.runAllowlistHosts('r1'));
    expect(ttl).toBeGreaterThan(6 * 24 * 3600);
    await repo.forgetForStage('r1', 'work', 'localhost');
    expect(await repo.firstForStage('r1', 'work', 'localhost')).toBe(true);
    await repo.forgetRun('r1');
    expect(await redis.client.exists(keys.runAllowlistHosts('r1'))).toBe(0);
  });

  it('audits a report that arrives after the close, and records a report that never comes as overdue', async () => {
    const log = new MemoryAuditLog();
    const registry = { get: async () => undefined } as unknown as SessionRegistry;
    const audits = new AllowlistAudits(repo, registry, log, new NotedActivity(), { reportGraceMs: 200, sweepMs: 50 });
    await repo.put(pending('reported'));
    await repo.put(pending('lost'));
    await audits.sessionClosed('sf-r1-reported-1');
    await audits.sessionClosed('sf-r1-lost-1');
    await audits.report('sf-r1-reported-1', { navigationHosts: ['127.0.0.1', 'localhost', 'a.example.test'] });
    audits.start();
    try {
      const deadline = Date.now() + 10_000;
      while (log.records.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await audits.stop();
    }
    expect(log.records.map(({ at: _at, ...r }) => r)).toEqual([
      { type: 'navigation_outside_allowlist', profile: 'github', scope: 'local', runId: 'r1', stageId: 'reported', host: 'localhost' },
      { type: 'allowlist_unverified', profile: 'github', scope: 'local', runId: 'r1', stageId: 'lost', reason: REPORT_OVERDUE },
    ]);
    expect(await repo.open()).toEqual([]);
    expect(await repo.overdue(Number.MAX_SAFE_INTEGER)).toEqual([]);
  });
});
