import { DynamicModule, Module } from '@nestjs/common';
import { ArtifactStore } from '@stageflow/artifacts';
import type { RunnerConfig } from '@stageflow/config';
import { EngineModule, StageAttempts } from '@stageflow/engine';
import { RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { HealthServer } from './health/health.server';
import { RunnerOptions, resolveRunnerOptions } from './runner.options';
import { RUNNER_CONFIG, RUNNER_OPTIONS } from './runner.tokens';
import { LoginGateExecutor } from './stage/login/login-gate.executor';
import { StageExecutor } from './stage/stage-executor.service';
import { ActivityFiles } from './stage/activity/activity-files.adapter';
import { StageNavigations } from './stage/activity/stage-navigations.service';
import { BrowserHostClient } from './stage/browser-host.client';
import { StageLease } from './stage/stage-lease.service';
import { StageProcessAdapter } from './stage/stage-process.adapter';
import { StageWorker } from './stage/stage-worker.service';
import { StageWorkspace } from './stage/stage-workspace.adapter';
import { CdpStageTabConnector } from './stage/steps/cdp-stage-tab';
import { STAGE_TAB_CONNECTOR } from './stage/steps/stage-tab';
import { StepsExecutor } from './stage/steps/steps.executor';
import { AbandonSweep } from './sweep/abandon-sweep.service';

/** Everything a runner process does: the stage worker, cancels, the abandoned sweep, health. */
@Module({})
export class RunnerModule {
  static forRoot(config: RunnerConfig, options: RunnerOptions = {}): DynamicModule {
    const resolved = resolveRunnerOptions(options);
    return {
      module: RunnerModule,
      imports: [EngineModule.forRoot(config.redis, resolved.engine)],
      providers: [
        { provide: RUNNER_CONFIG, useValue: config },
        { provide: RUNNER_OPTIONS, useValue: resolved },
        StageProcessAdapter,
        StageWorkspace,
        {
          // A waiting run reclaims leases of runs that ended (past browser-host's
          // close window) or vanished, should browser-host not have released them.
          provide: ProfileLeases,
          inject: [StageAttempts],
          useFactory: (attempts: StageAttempts) =>
            new ProfileLeases({
              redis: config.redis.url,
              keys: new RedisKeys(config.redis.prefix),
              isRunAlive: (runId) => attempts.mayHoldLease(runId),
            }),
        },
        BrowserHostClient,
        ActivityFiles,
        StageNavigations,
        { provide: ArtifactStore, useValue: new ArtifactStore({ root: config.artifactsRoot, maxBytes: config.artifactMaxBytes }) },
        { provide: STAGE_TAB_CONNECTOR, useClass: CdpStageTabConnector },
        StepsExecutor,
        StageExecutor,
        LoginGateExecutor,
        StageLease,
        StageWorker,
        AbandonSweep,
        HealthServer,
      ],
      exports: [StageExecutor, StageWorker, HealthServer],
    };
  }
}
