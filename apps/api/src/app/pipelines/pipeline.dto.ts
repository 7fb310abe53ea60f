import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { PipelineEntry } from '@stageflow/engine';
import type { PipelineDiagnostic } from '@stageflow/pipeline';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';

/** Body of validate and register as JSON; a raw YAML body arrives here as `{ yaml }`. */
export class PipelineSourceDto {
  @ApiProperty({ description: 'The pipeline YAML.', example: 'name: hello\nstages:\n  - id: greet\n    run: echo hi\n' })
  @IsString()
  yaml!: string;

  @ApiPropertyOptional({ description: 'File name shown in diagnostics.', default: '<inline>', maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  file?: string;

  @ApiPropertyOptional({ description: 'Report warnings as errors.', default: false })
  @IsOptional()
  @IsBoolean()
  strict?: boolean;
}

export class DiagnosticDto {
  @ApiProperty({ example: 'unknown_key', description: 'Stable code; see docs/yaml-catalog.md.' })
  code!: string;
  @ApiProperty({ enum: ['error', 'warning'] })
  severity!: 'error' | 'warning';
  @ApiProperty()
  message!: string;
  @ApiProperty({ description: 'What to do about it.' })
  hint!: string;
  @ApiProperty({ example: '<inline>' })
  file!: string;
  @ApiProperty({ minimum: 1 })
  line!: number;
  @ApiProperty({ minimum: 1 })
  column!: number;
  @ApiPropertyOptional({ example: 'stages[2].browser.profile' })
  path?: string;
}

export class ValidationResultDto {
  @ApiProperty()
  valid!: boolean;
  @ApiProperty({ type: [DiagnosticDto] })
  errors!: DiagnosticDto[];
  @ApiProperty({ type: [DiagnosticDto] })
  warnings!: DiagnosticDto[];
}

export class PipelineSummaryDto {
  @ApiProperty({ example: 'hello' })
  name!: string;
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
  @ApiProperty({ description: 'Number of stages.' })
  stages!: number;

  static from(entry: PipelineEntry): PipelineSummaryDto {
    return { name: entry.name, updatedAt: entry.updatedAt, stages: entry.stages };
  }
}

export class PipelineResponseDto extends PipelineSummaryDto {
  @ApiProperty({ description: 'The YAML as registered.' })
  source!: string;

  static override from(entry: PipelineEntry): PipelineResponseDto {
    return { ...PipelineSummaryDto.from(entry), source: entry.source };
  }
}

export class RegisteredPipelineResponseDto extends PipelineResponseDto {
  @ApiProperty({ type: [DiagnosticDto], description: 'Warnings of the load (a pipeline with errors is not registered).' })
  warnings!: DiagnosticDto[];

  static withWarnings(entry: PipelineEntry, warnings: PipelineDiagnostic[]): RegisteredPipelineResponseDto {
    return { ...PipelineResponseDto.from(entry), warnings };
  }
}
