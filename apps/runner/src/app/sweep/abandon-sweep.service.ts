import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { RunnerConfig } from '@stageflow/config';
import { AbandonSweeper } from '@stageflow/engine';
import { RUNNER_CONFIG, RUNNER_OPTIONS } from '../runner.tokens';
import type { ResolvedRunnerOptions } from '../runner.options';

/** Runs the abandoned-run sweep every `abandonCheckMs` (one runner at a time sweeps; see AbandonSweeper). */
@Injectable()
export class AbandonSweep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AbandonSweep');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly sweeper: AbandonSweeper,
    @Inject(RUNNER_CONFIG) private readonly config: RunnerConfig,
    @Inject(RUNNER_OPTIONS) private readonly options: ResolvedRunnerOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.sweep) return;
    this.timer = setInterval(() => {
      this.running ??= this.sweep().finally(() => (this.running = undefined));
    }, this.config.abandonCheckMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private async sweep(): Promise<void> {
    try {
      // The lock outlives a slow sweep but frees itself if this runner dies mid-sweep.
      const report = await this.sweeper.sweepOnce(Math.max(this.config.abandonCheckMs * 3, 30000));
      for (const { runId, reason } of report?.abandoned ?? []) {
        this.logger.warn({ runId, msg: `marked the run abandoned: ${reason}` });
      }
    } catch (error) {
      this.logger.warn({ msg: `abandoned-run sweep failed: ${(error as Error).message}` });
    }
  }
}
