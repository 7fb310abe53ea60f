import { DynamicModule, Module } from '@nestjs/common';
import type { ApiConfig } from '@stageflow/config';
import { EngineModule } from '@stageflow/engine';
import { LoggingModule } from '@stageflow/logging';
import { ApiModule } from './api.module';

/** The api process: JSON logs and the engine on the configured Redis (the console is served by configureApp). */
@Module({})
export class AppModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot('api', config.logLevel),
        ApiModule.forRoot(config, { engine: EngineModule.forRoot(config.redis) }),
      ],
    };
  }
}
