import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { AcceptsYaml } from '../core/accepts-yaml.decorator';
import { ApiErrors, ApiGuardedRoutes, ApiIdParams } from '../core/api-errors.decorator';
import { ParseIdPipe } from '../core/parse-id.pipe';
import {
  PipelineResponseDto,
  PipelineSourceDto,
  PipelineSummaryDto,
  RegisteredPipelineResponseDto,
  ValidationResultDto,
} from './pipeline.dto';
import { PipelinesService } from './pipelines.service';

const YAML_BODY = { type: 'string', description: 'The pipeline YAML itself.' };
const BODY_ERRORS = {
  400: '`invalid_request`, `invalid_json`',
  413: '`body_too_large`',
  415: '`unsupported_media_type`',
};

@ApiTags('pipelines')
@ApiGuardedRoutes()
@ApiExtraModels(PipelineSourceDto)
@Controller('pipelines')
export class PipelinesController {
  constructor(private readonly pipelines: PipelinesService) {}

  @Post('validate')
  @HttpCode(HttpStatus.OK)
  @AcceptsYaml({ plainText: true })
  @ApiOperation({ summary: 'Check a pipeline without registering it.' })
  @ApiConsumes('application/json', 'text/yaml', 'application/x-yaml', 'text/plain')
  @ApiBody({
    schema: { oneOf: [{ $ref: getSchemaPath(PipelineSourceDto) }, YAML_BODY] },
    description: 'JSON `{yaml, file?, strict?}`, or the YAML itself as text/yaml, application/x-yaml or text/plain.',
  })
  @ApiOkResponse({ type: ValidationResultDto, description: 'Valid or not: the diagnostics say why.' })
  @ApiErrors(BODY_ERRORS)
  validate(@Body() dto: PipelineSourceDto): ValidationResultDto {
    return this.pipelines.validate(dto);
  }

  @Post()
  @AcceptsYaml()
  @ApiOperation({
    summary: 'Register a pipeline, or replace the one with the same name. Always 201.',
    description: 'Not text/plain: a page on any site could post that without a CORS preflight.',
  })
  @ApiConsumes('application/json', 'text/yaml', 'application/x-yaml')
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(PipelineSourceDto) }, YAML_BODY] } })
  @ApiCreatedResponse({ type: RegisteredPipelineResponseDto })
  @ApiErrors({ ...BODY_ERRORS, 422: '`pipeline_invalid` (details: `{errors, warnings}`), `pipeline_name_reserved`' })
  register(@Body() dto: PipelineSourceDto): Promise<RegisteredPipelineResponseDto> {
    return this.pipelines.register(dto);
  }

  @Get()
  @ApiOperation({ summary: 'Registered pipelines, by name.' })
  @ApiOkResponse({ type: [PipelineSummaryDto] })
  list(): Promise<PipelineSummaryDto[]> {
    return this.pipelines.list();
  }

  // Declared before ":name" so that route does not take "schema" as a name.
  @Get('schema')
  @ApiOperation({ summary: 'JSON Schema of the pipeline YAML format, for editors.' })
  @ApiOkResponse({ schema: { type: 'object', additionalProperties: true } })
  schema(): Record<string, unknown> {
    return this.pipelines.schema();
  }

  @Get(':name')
  @ApiOperation({ summary: 'One registered pipeline with its YAML.' })
  @ApiIdParams('name')
  @ApiOkResponse({ type: PipelineResponseDto })
  @ApiErrors({ 400: '`invalid_id`', 404: '`pipeline_not_found`' })
  get(@Param('name', ParseIdPipe) name: string): Promise<PipelineResponseDto> {
    return this.pipelines.get(name);
  }
}
