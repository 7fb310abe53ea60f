import { Logger } from '@nestjs/common';
import type { SessionRecord } from './session-record';
import { hostsOutside, REPORT_OVERDUE } from './allowlist-audits.service';
import { memoryAllowlistAudits } from './testing/memory-allowlist-audits';

beforeAll(() => Logger.overrideLogger(false));

const record = (stageId: string, attempt = 1): SessionRecord => ({
  sessionId: `sf-run1-${stageId}-${attempt}`,
  hostId: 'unit',
  runId: 'run1',
  stageId,
  attempt,
  kind: 'shared',
  browserId: 'sb-1',
  scope: 'local',
  profile: 'github',
  targetId: 'T1',
  cdpEndpoint: 'ws://127.0.0.1:1/devtools/browser/x',
  socketDir: '/tmp/sock',
  headedMode: 'headless',
  openedAt: '2024-05-01T10:00:00.000Z',
  blocked: [],
});

function setup(registered = new Set<string>()) {
  return memoryAllowlistAudits({ get: async (id: string) => (registered.has(id) ? record('x') : undefined) });
}

describe('hostsOutside', () => {
  it('keeps the hosts the list does not allow, with agent-browser matching', () => {
    expect(
      hostsOutside({ navigationHosts: ['github.com', 'api.github.com', 'example.com', 'www.example.com', 'notgithub.com', '127.0.0.1', 'localhost'] }, [
        '*.github.com',
        'example.com',
        '127.0.0.1',
      ]),
    ).toEqual(['www.example.com', 'notgithub.com', 'localhost']);
  });
});

describe('AllowlistAudits', () => {
  const allow = ['127.0.0.1', '*.example.test'];

  it('records each host outside allow_domains once per stage, across attempts, names and ids only', async () => {
    const { audits, log } = setup();
    await audits.expect(record('work', 1), allow);
    await audits.report('sf-run1-work-1', { navigationHosts: ['127.0.0.1', 'localhost', 'a.example.test', 'evil.test'] });
    await audits.expect(record('work', 2), allow);
    await audits.report('sf-run1-work-2', { navigationHosts: ['localhost', 'other.test'] });
    await audits.expect(record('peer'), allow);
    await audits.report('sf-run1-peer-1', { navigationHosts: ['localhost'] });
    expect(log.records.map(({ at: _at, ...r }) => r)).toEqual([
      { type: 'navigation_outside_allowlist', profile: 'github', scope: 'local', runId: 'run1', stageId: 'work', host: 'localhost' },
      { type: 'navigation_outside_allowlist', profile: 'github', scope: 'local', runId: 'run1', stageId: 'work', host: 'evil.test' },
      { type: 'navigation_outside_allowlist', profile: 'github', scope: 'local', runId: 'run1', stageId: 'work', host: 'other.test' },
      { type: 'navigation_outside_allowlist', profile: 'github', scope: 'local', runId: 'run1', stageId: 'peer', host: 'localhost' },
    ]);
  });

  it('writes nothing for a stage that stayed inside the list, or navigated nowhere', async () => {
    const { audits, log, activity } = setup();
    await audits.expect(record('a'), allow);
    await audits.report('sf-run1-a-1', { navigationHosts: ['127.0.0.1', 'example.test', 'deep.sub.example.test'] });
    await audits.expect(record('b'), allow);
    await audits.report('sf-run1-b-1', { navigationHosts: [] });
    expect(log.records).toEqual([]);
    expect(activity.lines).toEqual([]);
  });

  it('tells the stage\'s history which hosts were outside the list, by name', async () => {
    const { audits, activity } = setup();
    await audits.expect(record('work', 3), allow);
    await audits.report('sf-run1-work-3', { navigationHosts: ['localhost', 'evil.test'] });
    expect(activity.lines).toEqual([
      {
        stageId: 'work',
        attempt: 3,
        line: 'browser-host: this stage opened hosts outside allow_domains: localhost, evil.test. Recorded in the audit log; allow_domains is not enforced for profile stages.',
      },
    ]);
  });

  it('records allowlist_unverified with the runner\'s reason, and the hosts it could still read', async () => {
    const { audits, log, activity } = setup();
    await audits.expect(record('work'), allow);
    await audits.report('sf-run1-work-1', { navigationHosts: ['localhost'], unverified: 'activity_unreadable' });
    expect(log.records.map((r) => [r.type, 'host' in r ? r.host : 'reason' in r ? r.reason : ''])).toEqual([
      ['navigation_outside_allowlist', 'localhost'],
      ['allowlist_unverified', 'activity_unreadable'],
    ]);
    expect(activity.lines.map((l) => l.line)).toContain(
      "browser-host: could not check this stage's agent-browser navigations against allow_domains (activity_unreadable); recorded as allowlist_unverified.",
    );
  });

  it('audits one report per session: a second one, or one for a session it does not audit, is refused', async () => {
    const { audits, log } = setup();
    await audits.expect(record('work'), allow);
    await audits.report('sf-run1-work-1', { navigationHosts: ['localhost'] });
    await expect(audits.report('sf-run1-work-1', { navigationHosts: ['localhost'] })).rejects.toMatchObject({ code: 'allowlist_audit_not_found', status: 404 });
    await expect(audits.report('sf-run1-throwaway-1', { navigationHosts: [] })).rejects.toMatchObject({ code: 'allowlist_audit_not_found' });
    expect(log.records).toHaveLength(1);
  });

  it('records activity_not_reported once the report is overdue after the close (the runner died)', async () => {
    const { audits, log } = setup(new Set(['sf-run1-open-1']));
    await audits.expect(record('work'), allow);
    await audits.expect(record('open'), allow);
    const t0 = Date.now();
    await audits.sessionClosed('sf-run1-work-1');
    expect(await audits.expireOverdue(t0 + 500)).toBe(0);
    expect(await audits.expireOverdue(t0 + 5000)).toBe(1);
    expect(log.records.map(({ at: _at, ...r }) => r)).toEqual([
      { type: 'allowlist_unverified', profile: 'github', scope: 'local', runId: 'run1', stageId: 'work', reason: REPORT_OVERDUE },
    ]);
    // Too late now: the runner is told, and nothing more is written.
    await expect(audits.report('sf-run1-work-1', { navigationHosts: ['localhost'] })).rejects.toMatchObject({ code: 'allowlist_audit_not_found' });
    expect(log.records).toHaveLength(1);
  });

  it('starts the grace of an audit whose session is gone without a close being noted', async () => {
    const registered = new Set(['sf-run1-live-1']);
    const { audits, repo } = setup(registered);
    await audits.expect(record('live'), allow);
    await audits.expect(record('lost'), allow);
    const now = Date.now();
    expect(await audits.expireOverdue(now)).toBe(0);
    expect(repo.due.get('sf-run1-live-1')).toBe(Infinity);
    expect(repo.due.get('sf-run1-lost-1')).toBe(now + 1000);
    expect(await audits.expireOverdue(now + 1000)).toBe(1);
  });

  it('answers allowlist_audit_failed when the log cannot be written, without the file path, and writes the host on a later report', async () => {
    const { audits, log } = setup();
    await audits.expect(record('work', 1), allow);
    log.failing = true;
    const error = await audits.report('sf-run1-work-1', { navigationHosts: ['localhost'] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'allowlist_audit_failed', status: 500 });
    expect((error as Error).message).not.toContain('/home/someone');
    log.failing = false;
    await audits.expect(record('work', 2), allow);
    await audits.report('sf-run1-work-2', { navigationHosts: ['localhost'] });
    expect(log.records.map((r) => r.type)).toEqual(['navigation_outside_allowlist']);
  });

  it('forgets a run\'s audited hosts when the run ends', async () => {
    const { audits, repo } = setup();
    await audits.expect(record('work'), allow);
    await audits.report('sf-run1-work-1', { navigationHosts: ['localhost'] });
    expect(repo.audited.get('run1')?.size).toBe(1);
    await audits.runEnded('run1');
    expect(repo.audited.has('run1')).toBe(false);
  });

  it('checks for overdue reports on its timer until stopped', async () => {
    const { audits, log } = memoryAllowlistAudits({ get: async () => undefined }, { reportGraceMs: 0, sweepMs: 20 });
    await audits.expect(record('work'), allow);
    await audits.sessionClosed('sf-run1-work-1');
    audits.start();
    for (let i = 0; i < 100 && log.records.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await audits.stop();
    expect(log.records.map((r) => r.type)).toEqual(['allowlist_unverified']);
  });
});
