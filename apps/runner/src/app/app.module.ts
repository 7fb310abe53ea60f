import { DynamicModule, Module } from '@nestjs/common';
import type { RunnerConfig } from '@stageflow/config';
import { LoggingModule } from '@stageflow/logging';
import { RunnerModule } from './runner.module';

@Module({})
export class AppModule {
  static forRoot(config: RunnerConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [LoggingModule.forRoot('runner', config.logLevel), RunnerModule.forRoot(config)],
    };
  }
}
