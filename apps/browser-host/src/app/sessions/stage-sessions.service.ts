import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { AllowlistBlock } from '@stageflow/browser-hosts';
import {
  ConflictError,
  LIVE_VIEW_LIMITS,
  NotFoundError,
  StageflowError,
  type LoginHandoff,
  type OpenStageSessionRequest,
  type ReopenedStageSession,
  type StageSession,
} from '@stageflow/contracts';
import { checkStageAgainstBlockedSites, type HostConfig } from '@stageflow/host-config';
import { ProfileLeases } from '@stageflow/leases';
import { BROWSER_SETTINGS, HOST_CONFIG, OWNER_SCOPE, type BrowserSettings } from '../browsers/browser-host.tokens';
import { throwawayBrowserId } from '../browsers/browser-ids';
import { BrowserTabs } from '../browsers/browser-tabs.adapter';
import { CdpPublisher } from '../browsers/cdp-publisher';
import { HostReadiness } from '../browsers/host-readiness';
import { KeyedMutex } from '../browsers/keyed-mutex';
import { ProfileAccess } from '../browsers/profile-access.adapter';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { RunStates } from '../browsers/run-states.adapter';
import { AgentBrowserSessions } from './agent-browser-sessions.adapter';
import { AllowlistAudits } from './allowlist-audits.service';
import { SessionRegistry } from './session-registry.repository';
import type { BlockedRequest, SessionRecord } from './session-record';
import { endsSession, type StageStateChange } from './stage-ends';
import { stageSessionId, toStageSession } from './stage-session-env';
import { StageActivity } from './stage-activity.adapter';

/** `GET /internal/sessions/:id`: the session, whose stage it is, and what its allowlist refused. */
export interface StageSessionView extends StageSession {
  runId: string;
  stageId: string;
  attempt: number;
  profile?: string;
  /** Throw-away browsers with `allow_domains`: the first refused request of each host. */
  blockedRequests: BlockedRequest[];
}

/** The fencing check of `@stageflow/leases`; a port so the service is tested without Redis. */
export type LeaseFence = Pick<ProfileLeases, 'assertCurrent'>;

/** How long a session request waits for the startup sweep before answering 503. */
const READY_WAIT_MS = 10_000;
/** Runs ended in this process, remembered this long to refuse a late open. */
const ENDED_RUN_MEMORY_MS = 60 * 60 * 1000;

/**
 * Stage sessions: each stage attempt gets its own tab, in the run's shared browser for
 * its profile or in a throw-away browser, and the agent-browser environment to drive
 * it. Everything a request could be refused for is checked before any browser starts:
 * blocked sites (422), the run having ended (409), the lease's fencing token (409).
 */
@Injectable()
export class StageSessions {
  private readonly log = new Logger('StageSessions');
  private readonly mutex = new KeyedMutex();
  private readonly endedRuns = new Map<string, number>();
  private readonly blocked = new Map<string, BlockedRequest[]>();
  /** Per run: its socket folder prepared; per (run, profile): the profile ensured. Dropped at the run's teardown. */
  private readonly preparedRuns = new Map<string, Promise<unknown>>();
  private readonly ensuredProfiles = new Map<string, Promise<unknown>>();
  /** Per session: when its tab was last reopened (ms), for the 2 s limit. */
  private readonly reopenedAt = new Map<string, number>();

  constructor(
    private readonly browsers: RunBrowsers,
    private readonly registry: SessionRegistry,
    private readonly tabs: BrowserTabs,
    private readonly agents: AgentBrowserSessions,
    private readonly profiles: ProfileAccess,
    private readonly runs: RunStates,
    private readonly activity: StageActivity,
    private readonly audits: AllowlistAudits,
    private readonly readiness: HostReadiness,
    @Inject(ProfileLeases) private readonly leases: LeaseFence,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
    @Inject(OWNER_SCOPE) private readonly scope: string,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
    @Optional() private readonly publisher?: CdpPublisher,
  ) {}

  /** The session as a stage in another container reaches it (see {@link CdpPublisher}). */
  private async published(session: StageSession): Promise<StageSession> {
    const endpoint = this.publisher ? await this.publisher.publish(session.cdpEndpoint) : session.cdpEndpoint;
    if (endpoint === session.cdpEndpoint) return session;
    return { ...session, cdpEndpoint: endpoint, env: { ...session.env, AGENT_BROWSER_CDP: endpoint } };
  }

  async open(req: OpenStageSessionRequest): Promise<StageSession> {
    const ids = { runId: req.runId, stageId: req.stageId, profile: req.profile };
    // Config-only refusals first: they need no Redis and must precede any browser.
    checkStageAgainstBlockedSites(this.hostConfig, {
      stageId: req.stageId,
      allowDomains: req.allowDomains,
      checkUrl: req.checkUrl,
      loginUrl: req.loginUrl,
    });
    // A login gate needs a browser the operator can see: refused before any browser if there is no way to show one.
    const handoff = req.login ? this.loginHandoff() : undefined;
    await this.readiness.whenReady(READY_WAIT_MS);
    const socketDir = this.agents.socketDirOf(req.runId);
    const sessionId = stageSessionId(req.runId, req.stageId, req.attempt, socketDir);
    // Independent reads, at once; a finished run is reported before a stale lease, as when they ran in turn.
    const checks = Promise.allSettled([
      this.assertRunOpen(req.runId),
      req.profile ? this.leases.assertCurrent(this.scope, req.profile, req.runId, req.leaseToken as number) : undefined,
    ]);
    return this.mutex.run(sessionId, async () => {
      const [[runOpen, leaseCurrent], found] = await Promise.all([checks, Promise.allSettled([this.registry.get(sessionId)])]);
      if (runOpen.status === 'rejected') throw runOpen.reason;
      if (leaseCurrent.status === 'rejected') throw leaseCurrent.reason;
      const [lookup] = found;
      if (lookup.status === 'rejected') throw lookup.reason;
      const existing = lookup.value;
      if (existing) {
        if (await this.stillServes(existing)) return this.published(withHandoff(toStageSession(existing), handoff));
        await this.closeRecord(existing, 'replaced by a new open of the same attempt');
      }
      await this.once(this.preparedRuns, req.runId, () => this.agents.prepareRunDir(req.runId));
      const restart = { happened: false };
      const opened = req.profile
        ? await this.openShared(req, req.profile, sessionId, socketDir, handoff, restart)
        : await this.openThrowaway(req, sessionId, socketDir);
      const record = await this.bindAndRegister(opened);
      if (req.headed && this.browsers.headedModeForHeaded() === 'headless') this.noteHeadlessFallback(req);
      if (AllowlistAudits.audits(record, req.allowDomains)) {
        // allow_domains is soft with a profile: the runner reports the stage's navigations when it ends.
        await this.audits.expect(record, req.allowDomains).catch(async (error: unknown) => {
          await this.closeRecord(record, 'its allowlist audit could not be set up');
          throw error;
        });
      }
      if (this.endedRuns.has(req.runId)) {
        // The run ended while this session was being opened; its teardown has passed.
        await this.closeRecord(record, 'its run ended while it was opened');
        throw this.runFinished(req.runId);
      }
      this.log.log({ msg: 'Opened a stage session', ...ids, attempt: req.attempt, sessionId, browserId: record.browserId, targetId: record.targetId, ...(handoff ? { handoff } : {}) });
      const session = withHandoff(toStageSession(record), handoff);
      return this.published(restart.happened ? { ...session, restarted: true } : session);
    });
  }

  /** Closes the session's agent-browser session and tab (its throw-away browser too). Idempotent. */
  async close(sessionId: string): Promise<void> {
    await this.mutex.run(sessionId, async () => {
      const record = await this.registry.get(sessionId);
      if (record) await this.closeRecord(record, 'closed by the runner');
    });
  }

  /**
   * "Reopen browser tab" (live view): opens the tab's address in a fresh tab of the
   * same browser, binds the stage's agent-browser session to it, records it as the
   * session's tab and closes the old one. Once per {@link LIVE_VIEW_LIMITS.reopenIntervalMs}
   * per session (`429 reopen_too_soon`).
   */
  async reopen(sessionId: string): Promise<ReopenedStageSession> {
    return this.mutex.run(sessionId, async () => {
      const record = await this.registry.get(sessionId);
      if (!record) {
        throw new NotFoundError('session_not_found', `There is no open stage session "${sessionId}" on this browser-host.`);
      }
      const now = Date.now();
      const waitMs = (this.reopenedAt.get(sessionId) ?? -Infinity) + LIVE_VIEW_LIMITS.reopenIntervalMs - now;
      if (waitMs > 0) {
        throw new StageflowError('reopen_too_soon', `The tab was reopened moments ago; try again in ${Math.ceil(waitMs / 1000)} s.`, 429, {
          retryAfterMs: waitMs,
        });
      }
      this.reopenedAt.set(sessionId, now);
      const ids = { runId: record.runId, stageId: record.stageId, profile: record.profile, browserId: record.browserId, sessionId };
      let reopened: ReopenedStageSession;
      try {
        reopened = await this.tabs.reopen(record.cdpEndpoint, record.targetId);
      } catch (error) {
        throw new StageflowError(
          'reopen_failed',
          `The stage's tab could not be reopened (${(error as Error).message}). If the stage has ended or its browser is gone, there is nothing to reopen.`,
          409,
        );
      }
      // Bound and registered before the old tab closes: a teardown from here on closes the new tab, never strands it.
      try {
        await Promise.all([
          this.agents.rebind(record.socketDir, sessionId, reopened.targetId),
          this.registry.put({ ...record, targetId: reopened.targetId }),
        ]);
      } catch (error) {
        // Back to the old tab, which still works: the new one goes, the old binding and record come back.
        await this.tabs.close(record.cdpEndpoint, [reopened.targetId], true).catch(() => undefined);
        await Promise.allSettled([this.agents.bindTab(record.socketDir, sessionId, record.targetId), this.registry.put(record)]);
        throw error;
      }
      await this.tabs.close(record.cdpEndpoint, [record.targetId], true).catch((error: Error) =>
        this.log.warn({ msg: `Could not close the old tab after reopening it: ${error.message}`, ...ids }),
      );
      this.log.log({ msg: 'Reopened the stage\'s tab for the live view', ...ids, targetId: reopened.targetId });
      return reopened;
    });
  }

  async view(sessionId: string): Promise<StageSessionView> {
    const record = await this.registry.get(sessionId);
    if (!record) {
      throw new NotFoundError('session_not_found', `There is no open stage session "${sessionId}" on this browser-host.`);
    }
    return {
      ...(await this.published(toStageSession(record))),
      runId: record.runId,
      stageId: record.stageId,
      attempt: record.attempt,
      ...(record.profile ? { profile: record.profile } : {}),
      blockedRequests: this.blocked.get(sessionId) ?? record.blocked,
    };
  }

  /** A stage changed state: closes the sessions that change ends (see {@link endsSession}). */
  async closeEndedBy(runId: string, change: StageStateChange): Promise<number> {
    const ended = (await this.registry.ofRun(runId)).filter((s) => endsSession(s, change));
    for (const session of ended) {
      await this.mutex.run(session.sessionId, async () => {
        const record = await this.registry.get(session.sessionId);
        if (record) await this.closeRecord(record, `its stage is ${change.state} (attempt ${change.attempt})`);
      });
    }
    return ended.length;
  }

  /**
   * The run ended: refuses its later opens, and closes its sessions without touching
   * tabs (the run's browsers are closed next).
   */
  async closeRun(runId: string): Promise<number> {
    this.rememberEnded(runId);
    this.preparedRuns.delete(runId);
    await this.audits.runEnded(runId).catch((error: Error) => this.log.warn({ msg: `Could not drop the run's audited hosts: ${error.message}`, runId }));
    for (const key of this.ensuredProfiles.keys()) if (key.startsWith(`${runId}\n`)) this.ensuredProfiles.delete(key);
    const sessions = await this.registry.ofRun(runId);
    for (const session of sessions) {
      await this.mutex.run(session.sessionId, async () => {
        const record = await this.registry.get(session.sessionId);
        if (record) await this.closeRecord(record, 'its run ended', { browserClosing: true });
      });
    }
    return sessions.length;
  }

  /** Startup: a session of a live run whose stage has moved on (or whose browser was retired) is closed. */
  async closeIfStale(record: SessionRecord, browserGone: boolean): Promise<boolean> {
    const stage = await this.runs.stage(record.runId, record.stageId);
    const stale = browserGone || stage === 'gone' || endsSession(record, { stageId: record.stageId, ...stage });
    if (stale) await this.close(record.sessionId);
    return stale;
  }

  private async openShared(
    req: OpenStageSessionRequest,
    profile: string,
    sessionId: string,
    socketDir: string,
    handoff?: LoginHandoff,
    restart: { happened: boolean } = { happened: false },
  ): Promise<SessionRecord> {
    await this.once(this.ensuredProfiles, `${req.runId}\n${profile}`, () => this.profiles.ensure(this.scope, profile));
    await this.profiles.recordUse({ scope: this.scope, profile, runId: req.runId, stageId: req.stageId });
    const { handle, restarted } = await this.browsers.shared({
      runId: req.runId,
      stageId: req.stageId,
      scope: this.scope,
      profile,
      leaseToken: req.leaseToken as number,
      headed: req.headed || !!handoff,
      onScreen: handoff === 'local_window',
    });
    if (restarted) {
      restart.happened = true;
      void this.activity
        .note(
          req.runId,
          req.stageId,
          req.attempt,
          `browser-host: the browser of profile ${profile} had died (crash, out of memory or killed) and was restarted on the same profile; ` +
            'pages open in it were lost; the login is in the profile, but cookies it set in its last ~30 seconds may be lost: re-verify the login',
        )
        .catch(() => undefined);
    }
    const loginPage = handoff ? (req.loginUrl ?? req.checkUrl) : undefined;
    const targetId = await this.tabs.open(handle.wsEndpoint, loginPage ? { url: loginPage } : { keepSpare: true });
    return this.recordOf(req, sessionId, socketDir, { kind: 'shared', browserId: handle.browserId, cdpEndpoint: handle.wsEndpoint, headedMode: handle.headedMode, targetId, scope: this.scope, profile });
  }

  private async openThrowaway(req: OpenStageSessionRequest, sessionId: string, socketDir: string): Promise<SessionRecord> {
    this.blocked.delete(sessionId);
    const handle = await this.browsers.throwaway({
      runId: req.runId,
      stageId: req.stageId,
      sessionId,
      headed: req.headed,
      allowDomains: req.allowDomains,
      onBlocked: (block) => this.onBlocked(req, sessionId, block),
    });
    try {
      const targetId = await this.tabs.open(handle.wsEndpoint);
      return this.recordOf(req, sessionId, socketDir, { kind: 'throwaway', browserId: handle.browserId, cdpEndpoint: handle.wsEndpoint, headedMode: handle.headedMode, targetId });
    } catch (error) {
      await this.browsers.close(handle.browserId).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Binds agent-browser to the new tab and registers the session, both at once. If
   * either fails, the tab (or throw-away browser) is released and a written record
   * removed: unregistered or unbound, it would be invisible to teardown or useless.
   */
  private async bindAndRegister(record: SessionRecord): Promise<SessionRecord> {
    const [bound, put] = await Promise.allSettled([
      this.agents.bindTab(record.socketDir, record.sessionId, record.targetId),
      this.registry.put(record),
    ]);
    if (bound.status === 'fulfilled' && put.status === 'fulfilled') return record;
    await this.release(record).catch(() => undefined);
    if (put.status === 'fulfilled') await this.registry.remove(record).catch(() => undefined);
    throw bound.status === 'rejected' ? bound.reason : (put as PromiseRejectedResult).reason;
  }

  /** Runs `work` once per key; a failed run is forgotten so the next call retries it. */
  private once(done: Map<string, Promise<unknown>>, key: string, work: () => Promise<unknown>): Promise<unknown> {
    let pending = done.get(key);
    if (!pending) {
      pending = work();
      done.set(key, pending);
      pending.catch(() => {
        if (done.get(key) === pending) done.delete(key);
      });
    }
    return pending;
  }

  private recordOf(
    req: OpenStageSessionRequest,
    sessionId: string,
    socketDir: string,
    browser: Pick<SessionRecord, 'kind' | 'browserId' | 'cdpEndpoint' | 'headedMode' | 'targetId' | 'scope' | 'profile'>,
  ): SessionRecord {
    return {
      sessionId,
      hostId: this.settings.hostId,
      runId: req.runId,
      stageId: req.stageId,
      attempt: req.attempt,
      socketDir,
      openedAt: new Date().toISOString(),
      blocked: this.blocked.get(sessionId) ?? [],
      ...browser,
    };
  }

  private async closeRecord(record: SessionRecord, why: string, opts: { browserClosing?: boolean } = {}): Promise<void> {
    await this.release(record, opts);
    await this.registry.remove(record);
    this.blocked.delete(record.sessionId);
    // The runner's activity report may still come (a cancel closes the session first); its grace starts now.
    await this.audits.sessionClosed(record.sessionId).catch((error: Error) =>
      this.log.warn({ msg: `Could not start the allowlist report's grace (the overdue check will): ${error.message}`, runId: record.runId, stageId: record.stageId, sessionId: record.sessionId }),
    );
    this.reopenedAt.delete(record.sessionId);
    this.log.log({
      msg: `Closed a stage session: ${why}`,
      runId: record.runId,
      stageId: record.stageId,
      profile: record.profile,
      browserId: record.browserId,
      sessionId: record.sessionId,
    });
  }

  /** Ends the agent-browser session and closes the tab (or the throw-away browser). */
  private async release(record: SessionRecord, opts: { browserClosing?: boolean } = {}): Promise<void> {
    const ids = { runId: record.runId, stageId: record.stageId, profile: record.profile, browserId: record.browserId, sessionId: record.sessionId };
    const { boundTargetId } = await this.agents.end(record.socketDir, record.sessionId);
    if (record.kind === 'throwaway') {
      await this.browsers.close(record.browserId);
    } else if (!opts.browserClosing) {
      const handle = this.browsers.handle(record.browserId);
      // A restarted browser has a new endpoint; the tab died with the old one.
      if (handle && handle.wsEndpoint === record.cdpEndpoint) {
        const tabs = [...new Set([record.targetId, boundTargetId].filter((t): t is string => !!t))];
        await this.tabs.close(handle.wsEndpoint, tabs, true).catch((error: Error) =>
          this.log.warn({ msg: `Could not close the stage's tab: ${error.message}`, ...ids }),
        );
      }
    }
  }

  /** An existing session for the same attempt (the runner retried its request) is returned as is while it works. */
  private async stillServes(record: SessionRecord): Promise<boolean> {
    if (!(await this.browsers.isResponsive(record.browserId))) return false;
    const handle = this.browsers.handle(record.browserId);
    if (!handle || handle.wsEndpoint !== record.cdpEndpoint) return false;
    return this.tabs.exists(record.cdpEndpoint, record.targetId).catch(() => false);
  }

  /**
   * How a login gate shows its browser (spec: "What each Host shows"): a window on
   * the Host's screen, else the console's live view, else refused.
   */
  private loginHandoff(): LoginHandoff {
    if (this.browsers.hostCapabilities().screen) return 'local_window';
    if (this.settings.liveView) return 'live_view';
    throw new StageflowError(
      'login_needs_screen',
      'A visible browser is needed for login, but this Host has no screen and no live view.' +
        (this.settings.inContainer
          ? ' In Docker, log in on a machine with a screen first (or serve the console with the live view), or use a headless check only.'
          : ' Log in on a machine with a screen first, or use a headless check only.'),
      422,
    );
  }

  /** `headed: true` on a host with no screen and no Xvfb: the browser runs headless, and the run's history says so. */
  private noteHeadlessFallback(req: OpenStageSessionRequest): void {
    const line = headlessFallbackNote();
    this.log.log({ msg: line, runId: req.runId, stageId: req.stageId });
    void this.activity
      .note(req.runId, req.stageId, req.attempt, line)
      .catch((error: Error) => this.log.debug({ msg: `Headless fallback not added to the run's history: ${error.message}`, runId: req.runId, stageId: req.stageId }));
  }

  private onBlocked(req: OpenStageSessionRequest, sessionId: string, block: AllowlistBlock): void {
    const browserId = throwawayBrowserId(sessionId);
    const list = this.blocked.get(sessionId) ?? [];
    list.push({ host: block.host, url: block.url, resourceType: block.resourceType, at: new Date().toISOString() });
    this.blocked.set(sessionId, list);
    // Host and resource type only in logs and events: a path can carry a token.
    this.log.warn({ msg: 'The throw-away browser refused a request outside allow_domains', runId: req.runId, stageId: req.stageId, browserId, sessionId, host: block.host, resourceType: block.resourceType });
    void this.registry.setBlocked(sessionId, list).catch(() => undefined);
    void this.activity
      .note(req.runId, req.stageId, req.attempt, `browser-host: blocked a ${block.resourceType} request to ${block.host}: it is not in allow_domains`)
      .catch((error: Error) => this.log.debug({ msg: `Blocked request not added to the run's history: ${error.message}`, runId: req.runId, stageId: req.stageId }));
  }

  private async assertRunOpen(runId: string): Promise<void> {
    if (this.endedRuns.has(runId) || !(await this.runs.isAlive(runId))) throw this.runFinished(runId);
  }

  private runFinished(runId: string): StageflowError {
    return new ConflictError(
      'run_finished',
      `Run "${runId}" has ended or does not exist, so its stages get no browser. A late stage worker should stop here.`,
    );
  }

  private rememberEnded(runId: string): void {
    const now = Date.now();
    for (const [id, at] of this.endedRuns) if (now - at > ENDED_RUN_MEMORY_MS) this.endedRuns.delete(id);
    this.endedRuns.set(runId, now);
  }
}

/** The stage log line when a headed browser falls back to headless (docs/browser-sessions.md, "Headed and headless"). */
export function headlessFallbackNote(): string {
  return 'browser-host: the stage asked for a headed browser, but this host has no screen (DISPLAY, WAYLAND_DISPLAY) and no Xvfb on PATH, so the browser runs headless (its user agent says HeadlessChrome). Install Xvfb or set headed: false.';
}

function withHandoff(session: StageSession, handoff: LoginHandoff | undefined): StageSession {
  return handoff ? { ...session, handoff } : session;
}
