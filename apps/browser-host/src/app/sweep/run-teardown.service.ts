import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProfileLeases } from '@stageflow/leases';
import { KeyedMutex } from '../browsers/keyed-mutex';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { AgentBrowserSessions } from '../sessions/agent-browser-sessions.adapter';
import type { StageStateChange } from '../sessions/stage-ends';
import { StageSessions } from '../sessions/stage-sessions.service';

/** The part of `@stageflow/leases` teardown needs. */
export type LeaseRelease = Pick<ProfileLeases, 'releaseRun'>;

/**
 * What happens when a stage or a run ends, whoever noticed (the event watcher, the
 * startup sweep). Never relies on the stage worker, which may have been SIGKILLed.
 */
@Injectable()
export class RunTeardown {
  private readonly log = new Logger('RunTeardown');
  private readonly perRun = new KeyedMutex();

  constructor(
    private readonly sessions: StageSessions,
    private readonly browsers: RunBrowsers,
    private readonly agents: AgentBrowserSessions,
    @Inject(ProfileLeases) private readonly leases: LeaseRelease,
  ) {}

  /** A stage changed state: its sessions that this ends are closed (tab + agent-browser session). */
  async stageChanged(runId: string, change: StageStateChange): Promise<void> {
    await this.perRun.run(runId, () => this.sessions.closeEndedBy(runId, change));
  }

  /**
   * The run ended (success, failed, cancelled, abandoned) or is gone: its sessions are
   * closed, its browsers closed gracefully (Chrome writes the profile; throw-away
   * profiles are deleted), its socket dir removed, and only then its leases released,
   * so the next run never starts Chrome on a profile the old one still writes.
   */
  async runEnded(runId: string, why: string): Promise<void> {
    await this.perRun.run(runId, async () => {
      const sessions = await this.sessions.closeRun(runId);
      await this.browsers.closeRun(runId);
      await this.agents.removeRunDir(runId);
      const released = await this.leases.releaseRun(runId);
      if (sessions > 0 || released.length > 0) {
        this.log.log({
          msg: `Run ${why}: closed its browsers and ${sessions} stage session(s), released ${released.length} lease(s)`,
          runId,
          profiles: released.map((r) => r.profile),
        });
      }
    });
  }
}
