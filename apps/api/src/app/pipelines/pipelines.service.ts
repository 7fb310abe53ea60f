import { Inject, Injectable } from '@nestjs/common';
import { StageflowError } from '@stageflow/contracts';
import { PIPELINES_API, type PipelinesApi } from '@stageflow/engine';
import {
  loadPipeline,
  PIPELINE_JSON_SCHEMA,
  PipelineInvalidError,
  type LoadPipelineOptions,
  type Pipeline,
  type PipelineDiagnostic,
} from '@stageflow/pipeline';
import {
  PipelineResponseDto,
  PipelineSourceDto,
  PipelineSummaryDto,
  RegisteredPipelineResponseDto,
  ValidationResultDto,
} from './pipeline.dto';

/** `GET /api/pipelines/schema` is a route, so no pipeline may be called that. */
const RESERVED_NAMES = ['schema'];

@Injectable()
export class PipelinesService {
  constructor(@Inject(PIPELINES_API) private readonly pipelines: PipelinesApi) {}

  validate(dto: PipelineSourceDto): ValidationResultDto {
    const result = loadPipeline(dto.yaml, options(dto));
    return { valid: result.ok, errors: result.ok ? [] : result.errors, warnings: result.warnings };
  }

  async register(dto: PipelineSourceDto): Promise<RegisteredPipelineResponseDto> {
    const { pipeline, warnings } = this.load(dto.yaml, options(dto));
    if (RESERVED_NAMES.includes(pipeline.name)) {
      throw new StageflowError(
        'pipeline_name_reserved',
        `"${pipeline.name}" cannot name a pipeline: GET /api/pipelines/${pipeline.name} is another route. Choose another name.`,
        422,
      );
    }
    const entry = await this.pipelines.register(pipeline, dto.yaml);
    return RegisteredPipelineResponseDto.withWarnings(entry, warnings);
  }

  async list(): Promise<PipelineSummaryDto[]> {
    return (await this.pipelines.list()).map((entry) => PipelineSummaryDto.from(entry));
  }

  async get(name: string): Promise<PipelineResponseDto> {
    return PipelineResponseDto.from(await this.pipelines.get(name));
  }

  /** The YAML source of a registered pipeline; `pipeline_not_found` otherwise. */
  async source(name: string): Promise<string> {
    return (await this.pipelines.get(name)).source;
  }

  schema(): Record<string, unknown> {
    return PIPELINE_JSON_SCHEMA as Record<string, unknown>;
  }

  /** Loads YAML into a pipeline, or throws 422 `pipeline_invalid` with every diagnostic in `details`. */
  load(source: string, opts: LoadPipelineOptions): { pipeline: Pipeline; warnings: PipelineDiagnostic[] } {
    const result = loadPipeline(source, opts);
    if (!result.ok) throw new PipelineInvalidError(result.errors, result.warnings);
    return { pipeline: result.pipeline, warnings: result.warnings };
  }
}

function options(dto: PipelineSourceDto): LoadPipelineOptions {
  return { file: dto.file, strict: dto.strict ?? false };
}
