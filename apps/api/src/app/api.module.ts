import { DynamicModule, Module, Type } from '@nestjs/common';
import type { ApiConfig } from '@stageflow/config';
import { ArtifactsApiModule } from './artifacts/artifacts-api.module';
import { AuditApiModule } from './audit/audit-api.module';
import { CoreModule } from './core/core.module';
import type { EventsOptions } from './events/events.options';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { LiveViewApiModule } from './live-view/live-view-api.module';
import { PipelinesModule } from './pipelines/pipelines.module';
import { ProfilesApiModule } from './profiles/profiles-api.module';
import { RunsModule } from './runs/runs.module';

export interface ApiModuleOptions {
  /** A global module providing RUNS_API, PIPELINES_API and EVENT_TAIL_FACTORY: EngineModule, or a fake in tests. */
  engine: DynamicModule | Type;
  events?: Partial<EventsOptions>;
}

/** The api's routes and gateway over whichever engine is given: the real one in AppModule, fakes in unit tests. */
@Module({})
export class ApiModule {
  static forRoot(config: ApiConfig, options: ApiModuleOptions): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        CoreModule.forRoot(config),
        options.engine,
        PipelinesModule,
        RunsModule,
        HealthModule,
        ProfilesApiModule.forRoot(config),
        AuditApiModule.forRoot(config),
        ArtifactsApiModule.forRoot(config),
        LiveViewApiModule.forRoot(config),
        EventsModule.forRoot(options.events),
      ],
    };
  }
}
