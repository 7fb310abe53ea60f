import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuditClock,
  AuditFs,
  AuditPage,
  AuditLog,
  auditLogPath,
  AuditQueryInvalidError,
  AuditRecordInput,
  AuditRecordInvalidError,
  nodeAuditFs,
} from '../index';

class StepClock implements AuditClock {
  private t = Date.parse('2024-05-01T10:00:00.000Z');
  now(): Date {
    const d = new Date(this.t);
    this.t += 1000;
    return d;
  }
}

const stage = (runId: string, profile = 'github') => ({ profile, scope: 'local', runId, stageId: 'work' });
const used = (runId: string, profile = 'github'): AuditRecordInput => ({
  type: 'profile_used',
  ...stage(runId, profile),
});
const runIds = (page: AuditPage): string[] => page.records.map((r) => ('runId' in r ? r.runId : '-'));

describe('AuditLog', () => {
  let home: string;
  let log: AuditLog;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'sf-audit-'));
    log = new AuditLog(home, new StepClock());
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('appends one JSON line per record to $STAGEFLOW_HOME/browser/audit.jsonl, folder 0700 and file 0600', async () => {
    await log.append({ type: 'profile_created', profile: 'github', scope: 'local' });
    await log.append(used('run1'));
    expect(log.file).toBe(auditLogPath(home));
    const lines = readFileSync(log.file, 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0])).toEqual({
      at: '2024-05-01T10:00:00.000Z',
      type: 'profile_created',
      profile: 'github',
      scope: 'local',
    });
    expect(lines[2]).toBe('');
    expect(statSync(join(home, 'browser')).mode & 0o777).toBe(0o700);
    expect(statSync(log.file).mode & 0o777).toBe(0o600);
  });

  it('tightens a file that already existed with looser permissions', async () => {
    await log.append(used('run1'));
    const { chmodSync } = await import('node:fs');
    chmodSync(log.file, 0o644);
    await new AuditLog(home, new StepClock()).append(used('run2'));
    expect(statSync(log.file).mode & 0o777).toBe(0o600);
  });

  it.each([
    [
      'a path as profile',
      { type: 'profile_created', profile: '../../etc/passwd', scope: 'local' },
      'profile must be a profile name',
    ],
    [
      'an absolute path',
      { type: 'profile_created', profile: '/home/me/.stageflow/browser/local/github', scope: 'local' },
      'profile must be',
    ],
    ['a long value', { ...used('r'), stageId: 'x'.repeat(200) }, 'stageId must be a stage id'],
    [
      'a URL as host',
      { ...stage('r'), type: 'navigation_outside_allowlist', host: 'https://evil.test/?token=abc' },
      'host must be a lowercased hostname',
    ],
    [
      'free text as reason',
      { ...stage('r'), type: 'allowlist_unverified', reason: 'could not read /tmp/activity.log' },
      'reason must be a snake_case reason code',
    ],
    ['an extra field', { ...used('r'), cookie: 'sid=1' }, 'cookie is not a field of profile_used'],
    [
      'a volume path as browserData',
      { type: 'profile_deleted', profile: 'a', scope: 'local', browserData: '/var/lib/docker/volumes/sf-profile-local-a' },
      'browserData must be volume_removed or none',
    ],
    ['browserData on another type', { type: 'profile_created', profile: 'a', scope: 'local', browserData: 'none' }, 'browserData is not a field of profile_created'],
    ['an unknown type', { type: 'profile_renamed', profile: 'a', scope: 'local' }, 'type must be one of'],
    ['a missing id', { type: 'profile_used', profile: 'a', scope: 'local', runId: 'r' }, 'stageId must be'],
  ])('refuses %s, without echoing it', async (_name, record, message) => {
    const attempt = log.append(record as AuditRecordInput);
    await expect(attempt).rejects.toBeInstanceOf(AuditRecordInvalidError);
    await expect(attempt).rejects.toThrow(message);
    await expect(attempt).rejects.not.toThrow(/etc\/passwd|token=abc|activity\.log|sid=1|docker\/volumes/);
  });

  it('keeps profile_deleted\'s optional browserData, and reads records written before it existed', async () => {
    await log.append({ type: 'profile_deleted', profile: 'a', scope: 'local' });
    await log.append({ type: 'profile_deleted', profile: 'a', scope: 'local', browserData: 'volume_removed' });
    const { records } = await log.query({ type: 'profile_deleted', limit: 10 });
    expect(records.map((r) => ('browserData' in r ? r.browserData : undefined))).toEqual(['volume_removed', undefined]);
  });

  it('returns records newest first, with filters', async () => {
    await log.append({ type: 'profile_created', profile: 'github', scope: 'local' }); // 10:00:00
    await log.append(used('run1')); // 10:00:01
    await log.append(used('run2', 'gitlab')); // 10:00:02
    await log.append({ ...stage('run2'), type: 'navigation_outside_allowlist', host: 'evil.test' }); // 10:00:03
    await log.append({ ...stage('run3'), type: 'allowlist_unverified', reason: 'activity_unreadable' }); // 10:00:04

    const all = await log.query({ limit: 10 });
    expect(all.records.map((r) => r.at.slice(11, 19))).toEqual([
      '10:00:04',
      '10:00:03',
      '10:00:02',
      '10:00:01',
      '10:00:00',
    ]);
    expect(all.nextCursor).toBeUndefined();
    expect(runIds(await log.query({ limit: 10, type: 'profile_used' }))).toEqual(['run2', 'run1']);
    expect((await log.query({ limit: 10, profile: 'gitlab' })).records).toHaveLength(1);
    expect((await log.query({ limit: 10, runId: 'run2' })).records.map((r) => r.type)).toEqual([
      'navigation_outside_allowlist',
      'profile_used',
    ]);
    expect(
      (
        await log.query({ limit: 10, since: '2024-05-01T10:00:01Z', until: new Date('2024-05-01T10:00:03Z') })
      ).records.map((r) => r.at.slice(17, 19)),
    ).toEqual(['02', '01']);
  });

  it('pages with a cursor, even while new records are appended', async () => {
    for (let i = 0; i < 7; i++) await log.append(used(`run${i}`));
    const first = await log.query({ limit: 3 });
    expect(runIds(first)).toEqual(['run6', 'run5', 'run4']);
    await log.append(used('run7'));
    const second = await log.query({ limit: 3, cursor: first.nextCursor });
    expect(runIds(second)).toEqual(['run3', 'run2', 'run1']);
    const third = await log.query({ limit: 3, cursor: second.nextCursor });
    expect(runIds(third)).toEqual(['run0']);
    expect(third.nextCursor).toBeUndefined();
  });

  it('reads across chunk boundaries of a large file', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({
        at: new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString(),
        type: 'profile_used',
        profile: 'p',
        scope: 'local',
        runId: `run${i}`,
        stageId: 'work',
      }),
    );
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(home, 'browser'), { recursive: true });
    writeFileSync(log.file, `${lines.join('\n')}\n`);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await log.query({ limit: 700, cursor });
      seen.push(...runIds(page));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toHaveLength(3000);
    expect(seen[0]).toBe('run2999');
    expect(seen.at(-1)).toBe('run0');
  });

  it('tolerates a torn last line and garbage lines', async () => {
    await log.append(used('run1'));
    appendFileSync(
      log.file,
      'not json\n{"at":"2024-05-01T10:00:09.000Z","type":"profile_used","profile":"../x","scope":"local","runId":"r","stageId":"s"}\n',
    );
    appendFileSync(log.file, `${'x'.repeat(40_000)}\n`);
    await log.append(used('run2'));
    appendFileSync(log.file, '{"at":"2024-05-01T10:00:10.000Z","type":"profile_us');
    const page = await log.query({ limit: 10 });
    expect(runIds(page)).toEqual(['run2', 'run1']);
  });

  it('returns nothing before the first record is written', async () => {
    expect(await log.query({ limit: 5 })).toEqual({ records: [] });
  });

  it.each([
    [{ limit: 0 }, 'limit must be a whole number from 1 to 1000'],
    [{ limit: 5000 }, 'limit must be'],
    [{ limit: 10, type: 'profile_renamed' }, 'type must be one of'],
    [{ limit: 10, since: 'yesterday' }, 'since must be an ISO 8601 time'],
    [{ limit: 10, cursor: '../etc' }, 'cursor must be the nextCursor of a previous page'],
    [{ limit: 10, profile: 'a/b' }, 'profile must be a profile name'],
  ])('refuses the query %j', async (q, message) => {
    const attempt = log.query(q as never);
    await expect(attempt).rejects.toBeInstanceOf(AuditQueryInvalidError);
    await expect(attempt).rejects.toThrow(message);
  });

  it('tries to create the folder again after a failed append', async () => {
    let failures = 1;
    const flaky: AuditFs = {
      ...nodeAuditFs,
      ensureDir: async (dir, mode) => {
        if (failures-- > 0) throw new Error('EACCES');
        await nodeAuditFs.ensureDir(dir, mode);
      },
    };
    const flakyLog = new AuditLog(home, new StepClock(), flaky);
    await expect(flakyLog.append(used('run1'))).rejects.toThrow('EACCES');
    await flakyLog.append(used('run1'));
    expect((await flakyLog.query({ limit: 1 })).records).toHaveLength(1);
  });

  it('keeps every line whole when many appends race', async () => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(used(`run${i}`))));
    const lines = readFileSync(log.file, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(200);
    expect(lines.every((l) => JSON.parse(l).type === 'profile_used')).toBe(true);
  });
});
