import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiGuardedRoutes, ApiIdParams } from '../core/api-errors.decorator';
import { ParseIdPipe } from '../core/parse-id.pipe';
import { GateDecisionDto, ListRunsQueryDto, ReadEventsQueryDto, StartRunDto } from './run-request.dto';
import { RunEventPageResponseDto, RunPageResponseDto, RunResponseDto, StageResponseDto } from './run-response.dto';
import { RunsService } from './runs.service';

const BODY_ERRORS = { 413: '`body_too_large`', 415: '`unsupported_media_type`' };

@ApiTags('runs')
@ApiGuardedRoutes()
@Controller('runs')
export class RunsController {
  constructor(private readonly runs: RunsService) {}

  @Post()
  @ApiOperation({ summary: 'Start a run of a registered pipeline (`pipeline`) or of inline YAML (`yaml`).' })
  @ApiCreatedResponse({ type: RunResponseDto })
  @ApiErrors({
    ...BODY_ERRORS,
    400: '`invalid_request` (also when neither or both of pipeline/yaml are sent), `invalid_json`',
    404: '`pipeline_not_found`',
    422: '`pipeline_invalid` (details: `{errors, warnings}`)',
  })
  start(@Body() dto: StartRunDto): Promise<RunResponseDto> {
    return this.runs.start(dto);
  }

  @Get()
  @ApiOperation({ summary: 'Runs, newest first, one page at a time.' })
  @ApiOkResponse({ type: RunPageResponseDto })
  @ApiErrors({ 400: '`invalid_request`, or the engine\'s code for a bad cursor' })
  list(@Query() query: ListRunsQueryDto): Promise<RunPageResponseDto> {
    return this.runs.list(query);
  }

  @Get(':run')
  @ApiIdParams('run')
  @ApiOperation({ summary: 'A run with its stages.' })
  @ApiOkResponse({ type: RunResponseDto })
  @ApiErrors({ 400: '`invalid_id`', 404: '`run_not_found`' })
  get(@Param('run', ParseIdPipe) run: string): Promise<RunResponseDto> {
    return this.runs.get(run);
  }

  @Post(':run/cancel')
  @ApiIdParams('run')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Cancel a run: running stages are stopped, nothing new starts.' })
  @ApiOkResponse({ type: RunResponseDto })
  @ApiErrors({ 400: '`invalid_id`', 404: '`run_not_found`', 409: '`run_finished`' })
  cancel(@Param('run', ParseIdPipe) run: string): Promise<RunResponseDto> {
    return this.runs.cancel(run);
  }

  @Get(':run/events')
  @ApiIdParams('run')
  @ApiOperation({ summary: 'The run history after a seq, oldest first (the WebSocket streams the same events live).' })
  @ApiOkResponse({ type: RunEventPageResponseDto })
  @ApiErrors({ 400: '`invalid_id`, `invalid_request`', 404: '`run_not_found`' })
  events(@Param('run', ParseIdPipe) run: string, @Query() query: ReadEventsQueryDto): Promise<RunEventPageResponseDto> {
    return this.runs.events(run, query);
  }

  @Get(':run/stages/:stage')
  @ApiIdParams('run', 'stage')
  @ApiOperation({ summary: 'One stage: state, reason, envelope, log tail, gate.' })
  @ApiOkResponse({ type: StageResponseDto })
  @ApiErrors({ 400: '`invalid_id`', 404: '`run_not_found`, `stage_not_found`' })
  stage(@Param('run', ParseIdPipe) run: string, @Param('stage', ParseIdPipe) stage: string): Promise<StageResponseDto> {
    return this.runs.stage(run, stage);
  }

  @Post(':run/stages/:stage/gate')
  @ApiIdParams('run', 'stage')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Answer a gate that waits for the operator.' })
  @ApiOkResponse({ type: StageResponseDto, description: 'The gate stage after the answer.' })
  @ApiErrors({
    ...BODY_ERRORS,
    400: '`invalid_id`, `invalid_request`, `invalid_json`',
    404: '`run_not_found`, `stage_not_found`',
    409: '`gate_not_waiting` (answered already, or not reached), `not_a_gate`, `run_finished`',
  })
  answerGate(
    @Param('run', ParseIdPipe) run: string,
    @Param('stage', ParseIdPipe) stage: string,
    @Body() dto: GateDecisionDto,
  ): Promise<StageResponseDto> {
    return this.runs.answerGate(run, stage, dto);
  }
}
