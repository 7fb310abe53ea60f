import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { RUN_STATES, type RunState } from '@stageflow/contracts';
import { Transform, Type } from 'class-transformer';
import { Allow, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ID_PATTERN } from '../core/parse-id.pipe';

export class StartRunDto {
  @ApiPropertyOptional({ description: 'Name of a registered pipeline. Send this or `yaml`, not both.', example: 'hello' })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'pipeline must be a pipeline name (letters, digits, "_" or "-")' })
  pipeline?: string;

  @ApiPropertyOptional({ description: 'A pipeline YAML to run without registering it. Send this or `pipeline`.' })
  @IsOptional()
  @IsString()
  yaml?: string;

  @ApiPropertyOptional({ description: 'The run input (any JSON); root stages receive it.', default: {} })
  @Allow()
  // Kept exactly as sent: class-transformer would otherwise rebuild nested objects.
  @Transform(({ obj }) => (obj as Record<string, unknown>)['input'], { toClassOnly: true })
  input?: unknown;

  @ApiPropertyOptional({ description: 'Refuse a pipeline that has warnings.', default: false })
  @IsOptional()
  @IsBoolean()
  strict?: boolean;
}

export class ListRunsQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATES })
  @IsOptional()
  @IsIn(RUN_STATES)
  state?: RunState;

  @ApiPropertyOptional({ description: 'Only runs of this pipeline.' })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'pipeline must be a pipeline name (letters, digits, "_" or "-")' })
  pipeline?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit = 20;

  @ApiPropertyOptional({ description: 'The `next` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;
}

export class ReadEventsQueryDto {
  @ApiPropertyOptional({ description: 'Last seq you have; events after it are returned. 0 = from the start.', default: 0 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  after = 0;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 200 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit = 200;
}

export class GateDecisionDto {
  @ApiProperty({ enum: ['accept', 'reject'] })
  @IsIn(['accept', 'reject'])
  decision!: 'accept' | 'reject';

  @ApiPropertyOptional({ maxLength: 2000, description: 'Why; stored with the answer and shown in the run.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  note?: string;
}
