import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostReadiness } from '../browsers/host-readiness';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { AllowlistAudits } from '../sessions/allowlist-audits.service';
import { RunEndWatcher } from './run-end-watcher.service';
import { StartupSweep, type StartupSweepReport } from './startup-sweep.service';

const RETRY_MS = 2000;

/**
 * Boot and shutdown of browser-host's browser side. At boot, in the background so
 * `/health` answers meanwhile: pin the event cursor, sweep, start watching, then open
 * for sessions (retried while Redis is away); check for overdue allowlist reports from then
 * on. At shutdown: stop watching and kill the
 * throw-away browsers; shared browsers keep running for the next process to re-adopt.
 */
@Injectable()
export class BrowserHostLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('BrowserHostLifecycle');
  private stopping = false;
  private readonly shutdown = new AbortController();
  private started?: Promise<StartupSweepReport | undefined>;

  constructor(
    private readonly watcher: RunEndWatcher,
    private readonly sweep: StartupSweep,
    private readonly readiness: HostReadiness,
    private readonly browsers: RunBrowsers,
    private readonly audits: AllowlistAudits,
  ) {}

  onApplicationBootstrap(): void {
    this.started = this.start();
  }

  /** The startup sweep's report once browser-host serves sessions (`undefined` if it shut down first). */
  whenStarted(): Promise<StartupSweepReport | undefined> {
    return this.started ?? Promise.resolve(undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.shutdown.abort();
    await this.watcher.stop();
    await this.audits.stop();
    await this.browsers.shutdown();
  }

  private async start(): Promise<StartupSweepReport | undefined> {
    while (!this.stopping) {
      try {
        await this.watcher.pin();
        const report = await this.sweep.run();
        if (this.stopping) return undefined;
        this.watcher.start();
        // After the sweep: the sessions it closed started their report's grace.
        this.audits.start();
        this.readiness.markReady();
        return report;
      } catch (error) {
        if (this.stopping) return undefined;
        this.log.warn({ msg: `Startup sweep failed: ${(error as Error).message}; retrying before serving sessions` });
        await sleep(RETRY_MS, undefined, { signal: this.shutdown.signal }).catch(() => undefined);
      }
    }
    return undefined;
  }
}
