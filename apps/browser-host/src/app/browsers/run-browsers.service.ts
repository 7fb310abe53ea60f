import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AllowlistBlock, HeadedMode, HostCapabilities } from '@stageflow/browser-hosts';
import { BrowserProcesses, type BrowserHandle } from './browser-processes.adapter';
import { BrowserRegistry } from './browser-registry.repository';
import { BROWSER_SETTINGS, type BrowserSettings } from './browser-host.tokens';
import type { BrowserRecord } from './browser-record';
import { sharedBrowserId, throwawayBrowserId } from './browser-ids';
import { KeyedMutex } from './keyed-mutex';

export interface SharedBrowserRequest {
  runId: string;
  /** The stage asking, for log lines. */
  stageId?: string;
  scope: string;
  profile: string;
  /** The fencing token the caller checked; remembered on the record. */
  leaseToken: number;
  headed: boolean;
  /**
   * The operator must see this browser on the Host's screen (a login gate handed over
   * as `local_window`): a running headless one is closed gracefully (cookies kept) and
   * started again headed.
   */
  onScreen?: boolean;
}

export interface SharedBrowser {
  handle: BrowserHandle;
  /** A new process: first need of the run, or a restart after the previous one died. */
  started: boolean;
  /** The run had a browser for this profile that had died (its pages are lost; cookies are in the profile). */
  restarted: boolean;
}

export interface ThrowawayBrowserRequest {
  runId: string;
  stageId?: string;
  sessionId: string;
  headed: boolean;
  allowDomains: readonly string[];
  onBlocked: (block: AllowlistBlock) => void;
}

/** What became of a registered browser at startup. */
export type RestoreOutcome = 'adopted' | 'retired';

interface LiveBrowser {
  handle: BrowserHandle;
  record: BrowserRecord;
}

/**
 * The browsers of runs on this host: one shared browser per (run, profile), started
 * for the first stage that needs it and kept until the run ends; one throw-away
 * browser per profile-less stage session. Concurrent first requests for the same key
 * start one browser (in-process mutex, then the registry record). A shared browser
 * that died is restarted at its run's next request, on the same profile.
 */
@Injectable()
export class RunBrowsers {
  private readonly log = new Logger('RunBrowsers');
  private readonly live = new Map<string, LiveBrowser>();
  private readonly mutex = new KeyedMutex();

  constructor(
    private readonly processes: BrowserProcesses,
    private readonly registry: BrowserRegistry,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  /** The run's shared browser for the profile: the running one, a re-adopted one, or a new one. */
  async shared(req: SharedBrowserRequest): Promise<SharedBrowser> {
    const browserId = sharedBrowserId(req.runId, req.scope, req.profile);
    const ids = { runId: req.runId, stageId: req.stageId, profile: req.profile, browserId };
    return this.mutex.run(browserId, async () => {
      let restarted = false;
      const current = this.live.get(browserId);
      if (current && req.onScreen && current.record.headedMode === 'headless' && this.processes.capabilities().headedMode === 'display') {
        this.log.log({ msg: 'A login needs this browser on the screen; closing the headless one to start it headed (cookies kept)', ...ids });
        await current.handle.close().catch(() => undefined);
        this.live.delete(browserId);
        await this.registry.remove(current.record).catch(() => undefined);
      } else if (current) {
        if (await this.processes.isResponsive(current.handle)) {
          await this.rememberToken(current.record, req.leaseToken);
          this.warnOnModeMismatch(current.record, req);
          return { handle: current.handle, started: false, restarted: false };
        }
        this.log.warn({ msg: 'The shared browser is gone or not answering; restarting it on the same profile', ...ids });
        await current.handle.kill().catch(() => undefined);
        this.live.delete(browserId);
        restarted = true;
      } else {
        const record = await this.registry.get(browserId);
        if (record) {
          const adopted = await this.processes.adopt(record);
          if (adopted) {
            this.live.set(browserId, { handle: adopted, record });
            await this.rememberToken(record, req.leaseToken);
            this.log.log({ msg: 'Re-adopted the shared browser a previous browser-host started', ...ids, pid: record.pid });
            return { handle: adopted, started: false, restarted: false };
          }
          this.log.warn({ msg: 'The shared browser died; restarting it on the same profile', ...ids, pid: record.pid });
          await this.processes.killRemains(record);
          restarted = true;
        }
      }
      const handle = await this.processes.launchShared({
        browserId,
        runId: req.runId,
        scope: req.scope,
        profile: req.profile,
        headed: req.headed || !!req.onScreen,
      });
      const record: BrowserRecord = {
        ...this.recordOf(handle, req.runId),
        kind: 'shared',
        scope: req.scope,
        profile: req.profile,
        leaseToken: req.leaseToken,
      };
      await this.register(handle, record);
      this.log.log({
        msg: restarted ? 'Restarted the shared browser' : 'Started the shared browser',
        ...ids,
        host: handle.host,
        containerId: handle.containerId,
        pid: handle.pid,
        headedMode: handle.headedMode,
      });
      return { handle, started: true, restarted };
    });
  }

  /** A throw-away browser for one stage session (temporary profile, allowlist enforced when given). */
  async throwaway(req: ThrowawayBrowserRequest): Promise<BrowserHandle> {
    const browserId = throwawayBrowserId(req.sessionId);
    return this.mutex.run(browserId, async () => {
      const handle = await this.processes.launchThrowaway({
        browserId,
        headed: req.headed,
        allowDomains: req.allowDomains,
        onBlocked: req.onBlocked,
      });
      await this.register(handle, { ...this.recordOf(handle, req.runId), kind: 'throwaway', sessionId: req.sessionId });
      this.log.log({ msg: 'Started a throw-away browser', runId: req.runId, stageId: req.stageId, browserId, pid: handle.pid, headedMode: handle.headedMode });
      return handle;
    });
  }

  /** The handle of a browser this process holds, if any. */
  handle(browserId: string): BrowserHandle | undefined {
    return this.live.get(browserId)?.handle;
  }

  /** Whether the browser runs and answers. */
  async isResponsive(browserId: string): Promise<boolean> {
    const current = this.live.get(browserId);
    return current !== undefined && this.processes.isResponsive(current.handle);
  }

  /**
   * Closes a browser gracefully (Chrome writes its profile; a throw-away profile is
   * deleted) and forgets it. Idempotent; a browser that is already gone is just forgotten.
   */
  async close(browserId: string): Promise<void> {
    await this.mutex.run(browserId, async () => {
      const current = this.live.get(browserId);
      const record = current?.record ?? (await this.registry.get(browserId));
      if (!record) return;
      const handle = current?.handle ?? (await this.processes.adopt(record));
      if (handle) await handle.close();
      else await this.processes.killRemains(record);
      this.live.delete(browserId);
      await this.registry.remove(record);
      this.log.log({ msg: 'Closed the browser', runId: record.runId, profile: record.profile, browserId, pid: record.pid });
    });
  }

  /** Closes every browser of the run on this host, registered or left over. */
  async closeRun(runId: string): Promise<void> {
    const ids = new Set((await this.registry.ofRun(runId)).map((r) => r.browserId));
    for (const [id, { record }] of this.live) if (record.runId === runId) ids.add(id);
    await Promise.all([...ids].map((id) => this.close(id)));
    // Best effort: a Docker that does not answer must not keep the run's lease from
    // being released; the next startup sweep removes what is left.
    try {
      const leftovers = await this.processes.closeLeftoversOfRun(runId, this.knownIds());
      if (leftovers.length > 0) {
        this.log.log({ msg: 'Closed browsers of the ended run that no registry entry named', runId, browserIds: leftovers });
      }
    } catch (error) {
      this.log.warn({ msg: `Could not look for unregistered browsers of the ended run: ${(error as Error).message}`, runId });
    }
  }

  /**
   * Startup: takes over a registered browser of a live run when it still answers, else
   * retires it (kills what is left, drops the record; the next request restarts it).
   * Throw-away browsers are always retired: their allowlist enforcer lived in the old
   * process, and a browser whose allowlist is gone must not keep running.
   */
  async restore(record: BrowserRecord): Promise<RestoreOutcome> {
    return this.mutex.run(record.browserId, async () => {
      const adopted = record.kind === 'shared' ? await this.processes.adopt(record) : undefined;
      if (adopted) {
        this.live.set(record.browserId, { handle: adopted, record });
        return 'adopted';
      }
      const leftover = record.kind === 'throwaway' ? await this.processes.adopt(record) : undefined;
      if (leftover) await leftover.kill();
      else await this.processes.killRemains(record);
      await this.registry.remove(record);
      return 'retired';
    });
  }

  /** Ids of browsers this process holds or is launching: never orphans. */
  knownIds(): string[] {
    return [...new Set([...this.live.keys(), ...this.processes.runningIds()])];
  }

  /**
   * Shutdown: throw-away browsers are killed (their allowlist enforcer ends with this
   * process). Shared browsers keep running for the restarted host to re-adopt.
   */
  async shutdown(): Promise<void> {
    const throwaways = [...this.live.values()].filter((b) => b.record.kind === 'throwaway');
    await Promise.all(
      throwaways.map(async ({ handle, record }) => {
        await handle.kill().catch(() => undefined);
        this.live.delete(record.browserId);
        await this.registry.remove(record).catch(() => undefined);
      }),
    );
  }

  private recordOf(handle: BrowserHandle, runId: string): Omit<BrowserRecord, 'kind'> {
    return {
      browserId: handle.browserId,
      hostId: this.settings.hostId,
      host: handle.host,
      ...(handle.containerId ? { containerId: handle.containerId } : {}),
      runId,
      pid: handle.pid,
      cdpPort: handle.cdpPort,
      wsEndpoint: handle.wsEndpoint,
      headedMode: handle.headedMode,
      startedAt: new Date().toISOString(),
    };
  }

  private async register(handle: BrowserHandle, record: BrowserRecord): Promise<void> {
    try {
      await this.registry.put(record);
    } catch (error) {
      // An unregistered browser would be invisible to teardown and the sweep.
      await handle.kill().catch(() => undefined);
      throw error;
    }
    this.live.set(record.browserId, { handle, record });
  }

  private async rememberToken(record: BrowserRecord, token: number): Promise<void> {
    if (record.leaseToken === token) return;
    await this.registry.setLeaseToken(record.browserId, token);
    record.leaseToken = token;
  }

  /** What this Host can show an operator (its adapter's capabilities). */
  hostCapabilities(): HostCapabilities {
    return this.processes.capabilities();
  }

  /** What `headed: true` gets on this host: `headless` when it has no screen and no Xvfb. */
  headedModeForHeaded(): HeadedMode {
    return this.processes.capabilities().headedMode;
  }

  private warnOnModeMismatch(record: BrowserRecord, req: SharedBrowserRequest): void {
    // headed: true on a host with no screen and no Xvfb is quietly headless for everyone.
    const wanted = req.headed ? this.processes.capabilities().headedMode : 'headless';
    if (wanted === record.headedMode) return;
    this.log.warn({
      msg: `A stage asked for headed: ${req.headed}, but the run's browser for this profile already runs ${record.headedMode}; ` +
        'stages that share a profile share one browser and one mode',
      runId: req.runId,
      profile: req.profile,
      browserId: record.browserId,
    });
  }
}
