import { Logger } from '@nestjs/common';
import { ConflictError, type OpenStageSessionRequest } from '@stageflow/contracts';
import { parseHostConfig } from '@stageflow/host-config';
import { BrowserTabs } from '../browsers/browser-tabs.adapter';
import { HostReadiness } from '../browsers/host-readiness';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { RunStates, type StageNow } from '../browsers/run-states.adapter';
import { FakeProcesses, FakeProfiles, MemoryBrowserRegistry, SETTINGS } from '../browsers/testing/fake-browser-host';
import { AgentBrowserSessions, type RunSocketDir } from './agent-browser-sessions.adapter';
import type { SessionRegistry } from './session-registry.repository';
import type { BlockedRequest, SessionRecord } from './session-record';
import { StageActivity } from './stage-activity.adapter';
import { StageSessions } from './stage-sessions.service';
import { memoryAllowlistAudits } from './testing/memory-allowlist-audits';

beforeAll(() => Logger.overrideLogger(false));

class MemorySessions {
  readonly records = new Map<string, SessionRecord>();
  async put(r: SessionRecord) {
    this.records.set(r.sessionId, { ...r });
  }
  async get(id: string) {
    return this.records.get(id);
  }
  async setBlocked(id: string, blocked: readonly BlockedRequest[]) {
    const r = this.records.get(id);
    if (r) r.blocked = [...blocked];
  }
  async remove(r: Pick<SessionRecord, 'sessionId'>) {
    this.records.delete(r.sessionId);
  }
  async ofHost() {
    return [...this.records.values()];
  }
  async ofRun(runId: string) {
    return [...this.records.values()].filter((r) => r.runId === runId);
  }
}

/** A browser's pages, per endpoint. */
class FakeTabs extends BrowserTabs {
  pages = new Map<string, string[]>();
  urls = new Map<string, string>();
  private next = 1;
  async open(ws: string, options: { url?: string } = {}): Promise<string> {
    const id = `T${this.next++}`;
    if (options.url) this.urls.set(id, options.url);
    this.pages.set(ws, [...(this.pages.get(ws) ?? ['ANCHOR']), id]);
    return id;
  }
  async close(ws: string, ids: readonly string[], keepOnePage: boolean): Promise<void> {
    let pages = this.pages.get(ws) ?? [];
    if (keepOnePage && pages.every((p) => ids.includes(p))) pages = [...pages, `BLANK${this.next++}`];
    this.pages.set(ws, pages.filter((p) => !ids.includes(p)));
  }
  async exists(ws: string, id: string): Promise<boolean> {
    return (this.pages.get(ws) ?? []).includes(id);
  }
  async reopen(ws: string, id: string): Promise<{ targetId: string; url: string }> {
    if (!(await this.exists(ws, id))) throw new Error('No target with given id found');
    const url = this.urls.get(id) ?? 'about:blank';
    const targetId = await this.open(ws);
    this.urls.set(targetId, url);
    return { targetId, url };
  }
}

class FakeAgents extends AgentBrowserSessions {
  bound = new Map<string, string>();
  ended: string[] = [];
  failBind = false;
  dirs = new Set<string>();
  socketDirOf(runId: string): string {
    return `/tmp/sf-unit-run/${runId}`;
  }
  async prepareRunDir(runId: string): Promise<string> {
    this.dirs.add(runId);
    return this.socketDirOf(runId);
  }
  async bindTab(_dir: string, session: string, targetId: string): Promise<void> {
    if (this.failBind) {
      this.failBind = false;
      throw new Error('disk full');
    }
    this.bound.set(session, targetId);
  }
  restarted: string[] = [];
  async rebind(dir: string, session: string, targetId: string): Promise<void> {
    this.restarted.push(session);
    await this.bindTab(dir, session, targetId);
  }
  async end(_dir: string, session: string): Promise<{ boundTargetId?: string }> {
    this.ended.push(session);
    return { boundTargetId: this.bound.get(session) };
  }
  async removeRunDir(runId: string): Promise<void> {
    this.dirs.delete(runId);
  }
  async listRunDirs(): Promise<RunSocketDir[]> {
    return [];
  }
}

class FakeRuns extends RunStates {
  ended = new Set<string>();
  async isAlive(runId: string) {
    return !this.ended.has(runId);
  }
  async stage(): Promise<StageNow | 'gone'> {
    return { state: 'running', attempt: 1 };
  }
}

class NoActivity extends StageActivity {
  lines: string[] = [];
  async note(_r: string, _s: string, _a: number, line: string) {
    this.lines.push(line);
  }
}

function setup(configYaml = '', settings = SETTINGS) {
  const processes = new FakeProcesses();
  const profiles = new FakeProfiles();
  const browsers = new RunBrowsers(processes, new MemoryBrowserRegistry().asRegistry(), SETTINGS);
  const registry = new MemorySessions();
  const tabs = new FakeTabs();
  const agents = new FakeAgents();
  const runs = new FakeRuns();
  const readiness = new HostReadiness();
  readiness.markReady();
  const fence = { current: 7, checked: 0 };
  const leases = {
    async assertCurrent(_scope: string, _profile: string, _runId: string, token: number) {
      fence.checked++;
      if (token !== fence.current) throw new ConflictError('lease_not_held', 'stale');
    },
  };
  const activity = new NoActivity();
  const allowlist = memoryAllowlistAudits(registry);
  const sessions = new StageSessions(
    browsers,
    registry as unknown as SessionRegistry,
    tabs,
    agents,
    profiles,
    runs,
    activity,
    allowlist.audits,
    readiness,
    leases,
    parseHostConfig(configYaml, 'config.yaml'),
    'local',
    settings,
  );
  return { sessions, processes, profiles, registry, tabs, agents, runs, fence, activity, allowlist };
}

const work = (stageId: string, extra: Partial<OpenStageSessionRequest> = {}): OpenStageSessionRequest => ({
  runId: 'run1',
  stageId,
  attempt: 1,
  profile: 'work',
  leaseToken: 7,
  headed: false,
  allowDomains: [],
  ...extra,
});

describe('StageSessions', () => {
  describe('a login gate\'s session', () => {
    const login = (extra: Partial<OpenStageSessionRequest> = {}) =>
      work('login', { login: true, loginUrl: 'https://site.test/login', headed: false, ...extra });

    it('is refused before any browser on a Host with no screen and no live view, with the spec\'s words', async () => {
      const { sessions, processes } = setup();
      await expect(sessions.open(login())).rejects.toMatchObject({
        code: 'login_needs_screen',
        status: 422,
        message: 'A visible browser is needed for login, but this Host has no screen and no live view. Log in on a machine with a screen first, or use a headless check only.',
      });
      expect(processes.launches).toHaveLength(0);
      const docker = setup('', { ...SETTINGS, inContainer: true });
      await expect(docker.sessions.open(login())).rejects.toThrow(/In Docker, log in on a machine with a screen first/);
    });

    it('hands over through the live view when the console serves one: headed, its tab at the login page', async () => {
      const { sessions, processes, tabs } = setup('', { ...SETTINGS, liveView: true });
      const session = await sessions.open(login());
      expect(session.handoff).toBe('live_view');
      expect(tabs.urls.get(session.targetId)).toBe('https://site.test/login');
      // headed: false in the stage, but a login is always shown.
      expect(processes.launches[0]).toMatchObject({ kind: 'shared', headed: true });
      // A repeated open of the attempt (a redelivered job) says the same.
      expect((await sessions.open(login())).handoff).toBe('live_view');
      expect(processes.launches).toHaveLength(1);
    });

    it('uses a window on the Host\'s screen when there is one, and the check page without a login_url', async () => {
      const { sessions, processes, tabs } = setup('', { ...SETTINGS, liveView: true });
      processes.capabilities = () => ({ screen: true, liveView: true, headedMode: 'display' });
      const session = await sessions.open(login({ loginUrl: undefined, checkUrl: 'https://site.test/account' }));
      expect(session.handoff).toBe('local_window');
      expect(tabs.urls.get(session.targetId)).toBe('https://site.test/account');
    });
  });

  it('says in the stage history when a headed stage runs headless for want of a screen and Xvfb', async () => {
    const { sessions, processes, activity } = setup();
    await sessions.open(work('quiet', { headed: false }));
    await sessions.open(work('wanted', { headed: true }));
    expect(activity.lines).toEqual([]);
    processes.headedMode = 'headless';
    await sessions.open(work('fallback', { headed: true }));
    await sessions.open(work('asked-headless', { headed: false }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(activity.lines).toEqual([expect.stringContaining('runs headless')]);
    expect(activity.lines[0]).toContain('no Xvfb on PATH');
  });

  it('gives parallel stages of a run one browser and a tab each', async () => {
    const { sessions, processes, tabs } = setup();
    const [a, b] = await Promise.all([sessions.open(work('a')), sessions.open(work('b'))]);
    expect(processes.launches).toHaveLength(1);
    expect(a.cdpEndpoint).toBe(b.cdpEndpoint);
    expect(a.targetId).not.toBe(b.targetId);
    expect(new Set(tabs.pages.get(a.cdpEndpoint))).toEqual(new Set(['ANCHOR', a.targetId, b.targetId]));
    expect(a.env['AGENT_BROWSER_SESSION']).not.toBe(b.env['AGENT_BROWSER_SESSION']);
  });

  it('creates an unknown profile on first use and audits every use', async () => {
    const { sessions, profiles } = setup();
    await sessions.open(work('a'));
    await sessions.open(work('b'));
    expect(profiles.created).toEqual(['work']);
    expect(profiles.used).toEqual([
      { scope: 'local', profile: 'work', runId: 'run1', stageId: 'a' },
      { scope: 'local', profile: 'work', runId: 'run1', stageId: 'b' },
    ]);
  });

  it('refuses a blocked site before the fencing check or any browser', async () => {
    const { sessions, processes, fence, profiles } = setup('browser:\n  blocked_sites: [example.com]\n');
    await expect(sessions.open(work('login', { loginUrl: 'https://accounts.example.com/login' }))).rejects.toMatchObject({
      code: 'browser_site_blocked',
      status: 422,
    });
    await expect(sessions.open(work('t', { profile: undefined, leaseToken: undefined, allowDomains: ['*.example.com'] }))).rejects.toMatchObject({
      code: 'browser_site_blocked',
    });
    expect(fence.checked).toBe(0);
    expect(processes.launches).toEqual([]);
    expect(profiles.used).toEqual([]);
  });

  it('refuses a stale lease token before any browser', async () => {
    const { sessions, processes, fence, profiles } = setup();
    fence.current = 8;
    await expect(sessions.open(work('a'))).rejects.toMatchObject({ code: 'lease_not_held' });
    expect(processes.launches).toEqual([]);
    expect(profiles.used).toEqual([]);
  });

  it('refuses a stage of an ended run (a late worker)', async () => {
    const { sessions, processes, runs } = setup();
    runs.ended.add('run1');
    await expect(sessions.open(work('a'))).rejects.toMatchObject({ code: 'run_finished', status: 409 });
    expect(processes.launches).toEqual([]);
  });

  it('answers a repeated open of the same attempt with the same session', async () => {
    const { sessions, processes } = setup();
    const first = await sessions.open(work('a'));
    const again = await sessions.open(work('a'));
    expect(again).toEqual(first);
    expect(processes.launches).toHaveLength(1);
  });

  it('closing a session closes its tab and agent-browser session only, idempotently', async () => {
    const { sessions, tabs, agents, processes, registry } = setup();
    const a = await sessions.open(work('a'));
    const b = await sessions.open(work('b'));
    await sessions.close(a.sessionId);
    await sessions.close(a.sessionId);
    expect(tabs.pages.get(a.cdpEndpoint)).toEqual(['ANCHOR', b.targetId]);
    expect(agents.ended).toEqual([a.sessionId]);
    expect(processes.browsers[0].alive).toBe(true);
    expect([...registry.records.keys()]).toEqual([b.sessionId]);
  });

  it('never closes the last page of a browser it keeps', async () => {
    const { sessions, tabs, processes } = setup();
    const a = await sessions.open(work('a'));
    tabs.pages.set(a.cdpEndpoint, [a.targetId]);
    await sessions.close(a.sessionId);
    expect(tabs.pages.get(a.cdpEndpoint)).toHaveLength(1);
    expect(tabs.pages.get(a.cdpEndpoint)?.[0]).toMatch(/^BLANK/);
    expect(processes.browsers[0].alive).toBe(true);
  });

  it('closes the sessions a stage change ends, including an older attempt replaced by a retry', async () => {
    const { sessions, registry } = setup();
    const a = await sessions.open(work('a'));
    const b = await sessions.open(work('b'));
    expect(await sessions.closeEndedBy('run1', { stageId: 'a', state: 'queued', attempt: 2 })).toBe(1);
    expect(await sessions.closeEndedBy('run1', { stageId: 'b', state: 'running', attempt: 1 })).toBe(0);
    expect([...registry.records.keys()]).toEqual([b.sessionId]);
    expect(a.sessionId).not.toBe(b.sessionId);
  });

  it('gives a profile-less stage its own throw-away browser, closed with the session', async () => {
    const { sessions, processes } = setup();
    const t = await sessions.open(work('t', { profile: undefined, leaseToken: undefined, allowDomains: ['127.0.0.1'] }));
    expect(processes.launches).toEqual([{ kind: 'throwaway', browserId: t.browserId }]);
    await sessions.close(t.sessionId);
    expect(processes.browsers[0].alive).toBe(false);
  });

  it('expects an allowlist report from profile sessions with allow_domains only, and starts its grace at the close', async () => {
    const { sessions, allowlist } = setup();
    const audited = await sessions.open(work('a', { allowDomains: ['127.0.0.1'] }));
    await sessions.open(work('b'));
    await sessions.open(work('t', { profile: undefined, leaseToken: undefined, allowDomains: ['127.0.0.1'] }));
    expect([...allowlist.repo.pending.values()]).toEqual([
      { sessionId: audited.sessionId, hostId: 'unit', runId: 'run1', stageId: 'a', attempt: 1, profile: 'work', scope: 'local', allowDomains: ['127.0.0.1'] },
    ]);
    expect(allowlist.repo.due.get(audited.sessionId)).toBe(Infinity);
    const before = Date.now();
    await sessions.close(audited.sessionId);
    expect(allowlist.repo.due.get(audited.sessionId)).toBeGreaterThanOrEqual(before + 1000);
    // The report is still taken after the close (a cancel closes the session before the runner has read the activity).
    await allowlist.audits.report(audited.sessionId, { navigationHosts: ['localhost'] });
    expect(allowlist.log.records).toMatchObject([{ type: 'navigation_outside_allowlist', host: 'localhost', stageId: 'a' }]);
  });

  it('hands out no profile browser whose allowlist audit could not be set up', async () => {
    const { sessions, allowlist, registry, tabs } = setup();
    allowlist.repo.put = async () => {
      throw new Error('Redis is away');
    };
    await expect(sessions.open(work('a', { allowDomains: ['127.0.0.1'] }))).rejects.toMatchObject({ code: 'allowlist_audit_failed', status: 500 });
    expect([...registry.records.keys()]).toEqual([]);
    expect([...tabs.pages.values()].flat().filter((p) => p.startsWith('T'))).toEqual([]);
  });

  it('refuses later opens once its run was torn down', async () => {
    const { sessions } = setup();
    await sessions.closeRun('run1');
    await expect(sessions.open(work('a'))).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('StageSessions.reopen ("Reopen browser tab")', () => {
  afterEach(() => jest.useRealTimers());

  it('moves the session and its agent-browser binding to a fresh tab of the same browser and closes the old tab', async () => {
    const { sessions, tabs, agents, registry, processes } = setup();
    const a = await sessions.open(work('login'));
    const b = await sessions.open(work('other'));
    tabs.urls.set(a.targetId, 'http://127.0.0.1:9/account');

    const reopened = await sessions.reopen(a.sessionId);

    expect(reopened.url).toBe('http://127.0.0.1:9/account');
    expect(reopened.targetId).not.toBe(a.targetId);
    expect(tabs.pages.get(a.cdpEndpoint)).toEqual(['ANCHOR', b.targetId, reopened.targetId]);
    expect(tabs.urls.get(reopened.targetId)).toBe('http://127.0.0.1:9/account');
    expect(agents.bound.get(a.sessionId)).toBe(reopened.targetId);
    expect(agents.restarted).toEqual([a.sessionId]);
    expect(registry.records.get(a.sessionId)?.targetId).toBe(reopened.targetId);
    expect(processes.launches).toHaveLength(1);
    // Closing the session later closes the new tab.
    await sessions.close(a.sessionId);
    expect(tabs.pages.get(a.cdpEndpoint)).toEqual(['ANCHOR', b.targetId]);
  });

  it('allows one reopen per 2 s per session', async () => {
    jest.useFakeTimers({ now: Date.parse('2026-03-01T10:00:00Z') });
    const { sessions } = setup();
    const a = await sessions.open(work('login'));
    const b = await sessions.open(work('other'));
    await sessions.reopen(a.sessionId);
    await expect(sessions.reopen(a.sessionId)).rejects.toMatchObject({ code: 'reopen_too_soon', status: 429, message: expect.stringContaining('try again in 2 s') });
    await expect(sessions.reopen(b.sessionId)).resolves.toBeDefined();
    jest.setSystemTime(Date.parse('2026-03-01T10:00:02Z'));
    await expect(sessions.reopen(a.sessionId)).resolves.toBeDefined();
  });

  it('answers 404 for a closed session and 409 when the tab is gone, leaving the session as it was', async () => {
    const { sessions, tabs, registry } = setup();
    await expect(sessions.reopen('sf-run1-none-1')).rejects.toMatchObject({ code: 'session_not_found', status: 404 });
    const a = await sessions.open(work('login'));
    tabs.pages.set(a.cdpEndpoint, ['ANCHOR']);
    await expect(sessions.reopen(a.sessionId)).rejects.toMatchObject({ code: 'reopen_failed', status: 409 });
    expect(registry.records.get(a.sessionId)?.targetId).toBe(a.targetId);
  });

  it('keeps the old tab when the new binding cannot be written', async () => {
    const { sessions, tabs, agents, registry } = setup();
    const a = await sessions.open(work('login'));
    agents.failBind = true;
    await expect(sessions.reopen(a.sessionId)).rejects.toThrow('disk full');
    expect(tabs.pages.get(a.cdpEndpoint)).toEqual(['ANCHOR', a.targetId]);
    expect(registry.records.get(a.sessionId)?.targetId).toBe(a.targetId);
  });
});
