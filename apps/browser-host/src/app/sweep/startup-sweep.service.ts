import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProfileLeases } from '@stageflow/leases';
import { ProfileStore } from '@stageflow/profiles';
import { rm } from 'node:fs/promises';
import { BrowserProcesses } from '../browsers/browser-processes.adapter';
import { BrowserRegistry } from '../browsers/browser-registry.repository';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { RunStates } from '../browsers/run-states.adapter';
import { OWNER_SCOPE } from '../browsers/browser-host.tokens';
import { ContainerBrowserProcesses } from '../browsers/container-browser-processes.adapter';
import { AgentBrowserSessions } from '../sessions/agent-browser-sessions.adapter';
import { SessionRegistry } from '../sessions/session-registry.repository';
import { StageSessions } from '../sessions/stage-sessions.service';
import { RunTeardown } from './run-teardown.service';

/** What one startup sweep did, for its log line and tests. */
export interface StartupSweepReport {
  /** Runs that ended or vanished while no browser-host watched them: torn down. */
  endedRuns: string[];
  /** Shared browsers of live runs taken over from the previous process. */
  adopted: string[];
  /** Registered browsers that could not be taken over (dead, or throw-away). */
  retired: string[];
  /** Sessions of live runs closed because their stage moved on or their browser was retired. */
  closedSessions: string[];
  /** Chromium, Xvfb and temp profiles of this host that no registry entry explains. */
  orphans: { browsers: string[]; displays: string[]; profiles: string[] };
  /** Leases taken back from dead runs. */
  reclaimedLeases: number;
  /** Profiles whose container-host volume went because the profile no longer exists. */
  orphanVolumes: string[];
}

/** The volume calls of the sweep; `ContainerBrowserProcesses` fits it. */
export type SweptVolumes = Pick<ContainerBrowserProcesses, 'inUse' | 'sweepProfileVolumes'>;

/**
 * Runs once before browser-host serves sessions: nothing a dead run had (browser,
 * private Xvfb, temp profile, tab, agent-browser daemon, socket files, lease) outlives
 * it, and live runs keep their browsers, re-adopted by pid and CDP port.
 */
@Injectable()
export class StartupSweep {
  private readonly log = new Logger('StartupSweep');

  constructor(
    private readonly browserRegistry: BrowserRegistry,
    private readonly sessionRegistry: SessionRegistry,
    private readonly agents: AgentBrowserSessions,
    private readonly runs: RunStates,
    private readonly browsers: RunBrowsers,
    private readonly sessions: StageSessions,
    private readonly processes: BrowserProcesses,
    private readonly teardown: RunTeardown,
    @Inject(ProfileLeases) private readonly leases: Pick<ProfileLeases, 'reclaimAll'>,
    @Inject(ContainerBrowserProcesses) private readonly volumes: SweptVolumes,
    @Inject(ProfileStore) private readonly profiles: Pick<ProfileStore, 'exists'>,
    @Inject(OWNER_SCOPE) private readonly scope: string,
  ) {}

  async run(): Promise<StartupSweepReport> {
    const [browserRecords, sessionRecords, runDirs] = await Promise.all([
      this.browserRegistry.ofHost(),
      this.sessionRegistry.ofHost(),
      this.agents.listRunDirs(),
    ]);
    const runIds = new Set<string>([
      ...browserRecords.map((r) => r.runId),
      ...sessionRecords.map((r) => r.runId),
      ...runDirs.flatMap((d) => (d.runId ? [d.runId] : [])),
    ]);
    const alive = new Map<string, boolean>();
    // Sequential: an engine error (liveness unknown) aborts the sweep, which is retried.
    for (const runId of runIds) alive.set(runId, await this.runs.isAlive(runId));

    const report: StartupSweepReport = {
      endedRuns: [],
      adopted: [],
      retired: [],
      closedSessions: [],
      orphans: { browsers: [], displays: [], profiles: [] },
      reclaimedLeases: 0,
      orphanVolumes: [],
    };
    for (const [runId, live] of alive) {
      if (live) continue;
      await this.teardown.runEnded(runId, 'ended while browser-host was down');
      report.endedRuns.push(runId);
    }
    for (const record of browserRecords) {
      if (!alive.get(record.runId)) continue;
      const outcome = await this.browsers.restore(record);
      (outcome === 'adopted' ? report.adopted : report.retired).push(record.browserId);
    }
    for (const session of sessionRecords) {
      if (!alive.get(session.runId)) continue;
      const browserGone = report.retired.includes(session.browserId) || !this.browsers.handle(session.browserId);
      if (await this.sessions.closeIfStale(session, browserGone)) report.closedSessions.push(session.sessionId);
    }
    // Socket dirs of no live run (an unreadable marker included): leftover daemon files.
    for (const dir of runDirs) {
      if (!dir.runId || !alive.get(dir.runId)) await rm(dir.dir, { recursive: true, force: true });
    }
    report.orphans = await this.processes.sweepOrphans(this.browsers.knownIds());
    report.reclaimedLeases = (await this.leases.reclaimAll((runId) => this.runs.isAlive(runId))).length;
    report.orphanVolumes = await this.sweepVolumes();
    this.log.log({ msg: 'Startup sweep done', ...report });
    return report;
  }

  /**
   * Volumes of profiles deleted while no container Host could remove them (browser-host
   * down, the folder removed by hand, a Host that used local browsers then): a new
   * profile of the same name must not inherit their login. After the container sweep,
   * so volumes of dead runs' containers are free. A profile whose folder is unsafe is
   * kept: the store cannot say it is gone.
   */
  private async sweepVolumes(): Promise<string[]> {
    if (!this.volumes.inUse) return [];
    const removed = await this.volumes.sweepProfileVolumes(this.scope, (profile) =>
      this.profiles.exists(this.scope, profile).catch(() => true),
    );
    if (removed.length > 0) this.log.log({ msg: `Removed the Docker volumes of ${removed.length} deleted profile(s)`, profiles: removed });
    return removed;
  }
}
