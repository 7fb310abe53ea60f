import { DynamicModule, Module } from '@nestjs/common';
import type { RelayConfig } from '@stageflow/config';
import { EngineModule } from '@stageflow/engine';
import { HealthModule } from '@stageflow/health';
import { loadHostConfig } from '@stageflow/host-config';
import { LiveViewModule } from '@stageflow/live-view';
import { LoggingModule } from '@stageflow/logging';
import { BrowserHostClient } from './browser-host.client';
import { ViewRevocations } from './revocation/view-revocations.service';
import { SERVICE_CONFIG, SERVICE_NAME, STAGE_VIEW_OPTIONS } from './service-config';
import { LiveViewServer } from './viewers/live-view.server';
import { ViewAdmission } from './viewers/view-admission.service';
import { DEFAULT_STAGE_VIEW_OPTIONS, type StageViewOptions } from './views/stage-view';
import { StageViews } from './views/stage-views.service';

/**
 * live-view-relay: one WebSocket per viewer, screencast out and input in, dialogs,
 * popups and "Reopen browser tab" (see docs/live-view.md). Reads
 * `$STAGEFLOW_HOME/config.yaml` once, here, for `browser.dialog_timeout_seconds`: an
 * invalid file stops the boot, as in browser-host.
 */
@Module({})
export class AppModule {
  static forRoot(config: RelayConfig, overrides: Partial<StageViewOptions> = {}): DynamicModule {
    const hostConfig = loadHostConfig(config.home);
    const viewOptions: StageViewOptions = {
      ...DEFAULT_STAGE_VIEW_OPTIONS,
      dialogTimeoutSeconds: hostConfig.browser.dialogTimeoutSeconds,
      ...overrides,
    };
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot(SERVICE_NAME, config.logLevel),
        HealthModule.forRoot({ service: SERVICE_NAME, redisUrl: config.redis.url }),
        // Runs and their events through the engine's port (RUNS_API, EVENT_TAIL_FACTORY), never raw keys.
        EngineModule.forRoot(config.redis),
        LiveViewModule.forRoot(config.redis),
      ],
      providers: [
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: STAGE_VIEW_OPTIONS, useValue: viewOptions },
        BrowserHostClient,
        StageViews,
        ViewAdmission,
        LiveViewServer,
        ViewRevocations,
      ],
    };
  }
}
