import { Inject, Injectable } from '@nestjs/common';
import { RUNS_API, type RunsApi } from '@stageflow/engine';
import { invalidRequest } from '../core/request-errors';
import { PipelinesService } from '../pipelines/pipelines.service';
import type { GateDecisionDto, ListRunsQueryDto, ReadEventsQueryDto, StartRunDto } from './run-request.dto';
import { RunEventDto, RunEventPageResponseDto, RunPageResponseDto, RunResponseDto, StageResponseDto } from './run-response.dto';

@Injectable()
export class RunsService {
  constructor(
    @Inject(RUNS_API) private readonly runs: RunsApi,
    private readonly pipelines: PipelinesService,
  ) {}

  /** Starts a run of a registered pipeline or of inline YAML (checked first: 422 `pipeline_invalid`). */
  async start(dto: StartRunDto): Promise<RunResponseDto> {
    if ((dto.pipeline === undefined) === (dto.yaml === undefined)) {
      const problem =
        dto.pipeline === undefined
          ? 'send "pipeline" (the name of a registered pipeline) or "yaml" (a pipeline to run as is)'
          : 'send only one of "pipeline" and "yaml"';
      throw invalidRequest([{ field: 'pipeline', problem }]);
    }
    const source = dto.yaml ?? (await this.pipelines.source(dto.pipeline as string));
    const file = dto.yaml === undefined ? `pipeline ${dto.pipeline}` : undefined;
    const { pipeline } = this.pipelines.load(source, { file, strict: dto.strict ?? false });
    const view = await this.runs.startRun({ pipeline, input: dto.input === undefined ? {} : dto.input });
    return RunResponseDto.from(view);
  }

  async list(query: ListRunsQueryDto): Promise<RunPageResponseDto> {
    const page = await this.runs.listRuns({
      state: query.state,
      pipeline: query.pipeline,
      limit: query.limit,
      cursor: query.cursor,
    });
    return RunPageResponseDto.from(page);
  }

  async get(runId: string): Promise<RunResponseDto> {
    return RunResponseDto.from(await this.runs.getRun(runId));
  }

  async cancel(runId: string): Promise<RunResponseDto> {
    return RunResponseDto.from(await this.runs.cancelRun(runId));
  }

  async stage(runId: string, stageId: string): Promise<StageResponseDto> {
    return StageResponseDto.from(await this.runs.getStage(runId, stageId));
  }

  async answerGate(runId: string, stageId: string, dto: GateDecisionDto): Promise<StageResponseDto> {
    const decision = dto.note === undefined ? { decision: dto.decision } : { decision: dto.decision, note: dto.note };
    return StageResponseDto.from(await this.runs.answerGate(runId, stageId, decision));
  }

  async events(runId: string, query: ReadEventsQueryDto): Promise<RunEventPageResponseDto> {
    const events = await this.runs.readEvents(runId, query.after, query.limit);
    return {
      items: events.map((e) => RunEventDto.from(e)),
      last: events.length ? events[events.length - 1].seq : query.after,
    };
  }
}
