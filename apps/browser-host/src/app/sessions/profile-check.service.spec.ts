import type { AuditRecord } from '@stageflow/audit';
import { StageflowError, type LoginCheckRequest } from '@stageflow/contracts';
import type { HostConfig } from '@stageflow/host-config';
import type { CheckHoldOutcome } from '@stageflow/leases';
import { sharedBrowserId } from '../browsers/browser-ids';
import type { BrowserTabs } from '../browsers/browser-tabs.adapter';
import type { HostReadiness } from '../browsers/host-readiness';
import type { RunBrowsers } from '../browsers/run-browsers.service';
import type { LoginChecks } from './login-check';
import { PROFILE_CHECK_LEASE_TTL_MS, ProfileChecks, type CheckLeases } from './profile-check.service';

const HOLDER = 'check_zzzzzzzz_0123456789ab';
const criteria: LoginCheckRequest = { url: 'https://app.test/account', loggedOutUrl: '*/login*' };

function setup(options: { hold?: CheckHoldOutcome; exists?: boolean; closeFails?: boolean; checkFails?: Error; blocked?: string[] } = {}) {
  const calls: string[] = [];
  const audited: unknown[] = [];
  const leases: CheckLeases = {
    holdForCheck: jest.fn(async (_scope: string, _profile: string, ttl: number): Promise<CheckHoldOutcome> => {
      calls.push(`hold ${ttl}`);
      return options.hold ?? { status: 'granted', grant: { scope: 'local', profile: 'work', runId: HOLDER, token: 9 }, expiresAt: '2030-01-01T00:00:00.000Z' };
    }),
    release: jest.fn(async (_s: string, _p: string, runId: string) => {
      calls.push(`release ${runId}`);
      return true;
    }),
  };
  const browsers = {
    shared: jest.fn(async (req: { runId: string; headed: boolean; leaseToken: number }) => {
      calls.push(`launch ${req.runId} headed=${req.headed} token=${req.leaseToken}`);
      return { handle: { wsEndpoint: 'ws://127.0.0.1:1/devtools/browser/x', browserId: 'sb-1' }, started: true, restarted: false };
    }),
    close: jest.fn(async (browserId: string) => {
      calls.push(`close ${browserId}`);
      if (options.closeFails) throw new Error('chrome would not quit');
    }),
  };
  const tabs = { open: jest.fn(async () => 'T1') };
  const checks = {
    checkTab: jest.fn(async () => {
      calls.push('judge');
      if (options.checkFails) throw options.checkFails;
      return { logged_in: true, url: 'https://app.test/account' };
    }),
  };
  const hostConfig = { browser: { blockedSites: options.blocked ?? [] } } as unknown as HostConfig;
  const service = new ProfileChecks(
    browsers as unknown as RunBrowsers,
    tabs as unknown as BrowserTabs,
    checks as unknown as LoginChecks,
    { whenReady: async () => undefined } as unknown as HostReadiness,
    { exists: async () => options.exists ?? true },
    leases,
    { append: async (record) => (audited.push(record), { ...record, at: '2030-01-01T00:00:00.000Z' }) as AuditRecord },
    hostConfig,
    'local',
  );
  return { service, calls, leases, browsers, audited };
}

describe('ProfileChecks', () => {
  it('holds the lease, judges in a headless browser, closes it gracefully, then releases', async () => {
    const { service, calls, audited } = setup();
    await expect(service.check('work', criteria)).resolves.toEqual({ logged_in: true, url: 'https://app.test/account' });
    // The verdict is audited, never the URL (it may carry a token).
    expect(audited).toEqual([{ type: 'profile_checked', profile: 'work', scope: 'local', result: 'logged_in' }]);
    expect(calls).toEqual([
      `hold ${PROFILE_CHECK_LEASE_TTL_MS}`,
      `launch ${HOLDER} headed=false token=9`,
      'judge',
      `close ${sharedBrowserId(HOLDER, 'local', 'work')}`,
      `release ${HOLDER}`,
    ]);
  });

  it('refuses with 409 naming the holder run, without starting a browser or queueing', async () => {
    const { service, calls } = setup({ hold: { status: 'busy', holder: { runId: 'mi3k2x8a-0a1b2c3d4e', token: 3, since: '2030-01-01T00:00:00.000Z' } } });
    const error = await service.check('work', criteria).catch((e: StageflowError) => e);
    expect(error).toMatchObject({ status: 409, code: 'profile_leased', details: { profile: 'work', holder: { runId: 'mi3k2x8a-0a1b2c3d4e' } } });
    expect((error as Error).message).toContain('in use by run mi3k2x8a-0a1b2c3d4e');
    expect(calls).toEqual([`hold ${PROFILE_CHECK_LEASE_TTL_MS}`]);
  });

  it('fails with profile_audit_failed (no path) when the audit cannot be written', async () => {
    const { service } = setup();
    (service as unknown as { audit: { append: () => Promise<never> } }).audit = { append: async () => Promise.reject(new Error('EACCES /home/x/.stageflow/browser/audit.jsonl')) };
    const error = await service.check('work', criteria).catch((e: StageflowError) => e);
    expect(error).toMatchObject({ code: 'profile_audit_failed', status: 500 });
    expect((error as Error).message).not.toContain('/');
  });

  it('says another check is running when a check holds it', async () => {
    const { service } = setup({ hold: { status: 'busy', holder: { runId: HOLDER, token: 3, since: '2030-01-01T00:00:00.000Z' } } });
    await expect(service.check('work', criteria)).rejects.toThrow(/being checked right now/);
  });

  it('closes and releases when the page fails too', async () => {
    const { service, calls } = setup({ checkFails: new StageflowError('login_check_unreachable', 'did not load', 502) });
    await expect(service.check('work', criteria)).rejects.toMatchObject({ code: 'login_check_unreachable' });
    expect(calls.slice(-2)).toEqual([`close ${sharedBrowserId(HOLDER, 'local', 'work')}`, `release ${HOLDER}`]);
  });

  it('keeps the lease (to its deadline) when the browser would not close, so no run starts Chrome on a profile still written', async () => {
    const { service, calls } = setup({ closeFails: true });
    await expect(service.check('work', criteria)).resolves.toMatchObject({ logged_in: true });
    expect(calls.some((c) => c.startsWith('release'))).toBe(false);
  });

  it('refuses an unknown profile and a blocked site before taking the lease', async () => {
    const missing = setup({ exists: false });
    await expect(missing.service.check('work', criteria)).rejects.toMatchObject({ code: 'profile_not_found', status: 404 });
    expect(missing.calls).toEqual([]);
    const blocked = setup({ blocked: ['app.test'] });
    await expect(blocked.service.check('work', criteria)).rejects.toMatchObject({ status: 422 });
    expect(blocked.calls).toEqual([]);
  });
});
