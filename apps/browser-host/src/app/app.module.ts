import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { ServiceConfig } from '@stageflow/config';
import { EngineModule } from '@stageflow/engine';
import { HealthModule } from '@stageflow/health';
import { LoggingModule } from '@stageflow/logging';
import { BrowsersModule } from './browsers/browsers.module';
import { SERVICE_CONFIG, SERVICE_NAME } from './service-config';
import { HttpErrorFilter } from './sessions/http-error.filter';
import { SessionsModule } from './sessions/sessions.module';
import { SweepModule } from './sweep/sweep.module';

/**
 * browser-host: owns the browsers (see docs/browser-sessions.md): the shared browser
 * per (run, profile), throw-away browsers, a tab per stage session, teardown at stage
 * and run ends, the startup sweep; and its health.
 */
@Module({})
export class AppModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot(SERVICE_NAME, config.logLevel),
        HealthModule.forRoot({ service: SERVICE_NAME, redisUrl: config.redis.url }),
        // Runs and their events through the engine's port (RUNS_API, EVENT_TAIL_FACTORY), never raw keys.
        EngineModule.forRoot(config.redis),
        BrowsersModule.forRoot(config),
        SessionsModule,
        SweepModule,
      ],
      providers: [
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
      ],
    };
  }
}
