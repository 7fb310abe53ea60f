import { Inject, Injectable } from '@nestjs/common';
import { ArtifactStore } from '@stageflow/artifacts';
import { RUNS_API, type RunsApi } from '@stageflow/engine';
import type { Readable } from 'node:stream';
import { GLOBAL_PREFIX } from '../app.setup';
import { ArtifactListResponseDto, ArtifactResponseDto } from './artifact.dto';

/** A download: what the controller streams, and how it is described. */
export interface ArtifactDownload {
  name: string;
  contentType: string;
  sizeBytes: number;
  stream: Readable;
}

/**
 * The artifact routes over the store (read-only here: runners write). A run
 * id is first checked against the engine, so an unknown run is the engine's
 * 404 `run_not_found` rather than an empty list.
 */
@Injectable()
export class ArtifactsApiService {
  constructor(
    @Inject(RUNS_API) private readonly runs: RunsApi,
    private readonly store: ArtifactStore,
  ) {}

  async list(runId: string): Promise<ArtifactListResponseDto> {
    await this.runs.getRun(runId);
    return { items: (await this.store.list(runId)).map((a) => ArtifactResponseDto.from(a, GLOBAL_PREFIX)) };
  }

  async open(runId: string, stageId: string, attempt: number, name: string): Promise<ArtifactDownload> {
    await this.runs.getRun(runId);
    const { info, stream } = await this.store.open({ runId, stageId, attempt }, name);
    return { name: info.name, contentType: info.contentType, sizeBytes: info.sizeBytes, stream };
  }
}
