import { DynamicModule, Module } from '@nestjs/common';
import { ArtifactStore } from '@stageflow/artifacts';
import type { ApiConfig } from '@stageflow/config';
import { ArtifactsController } from './artifacts.controller';
import { ArtifactsApiService } from './artifacts-api.service';

/** `/api/runs/:run/artifacts`: lists and serves what runners stored under STAGEFLOW_ARTIFACTS_ROOT (read-only here). */
@Module({})
export class ArtifactsApiModule {
  static forRoot(config: ApiConfig): DynamicModule {
    return {
      module: ArtifactsApiModule,
      controllers: [ArtifactsController],
      providers: [{ provide: ArtifactStore, useFactory: () => new ArtifactStore({ root: config.artifactsRoot }) }, ArtifactsApiService],
    };
  }
}
