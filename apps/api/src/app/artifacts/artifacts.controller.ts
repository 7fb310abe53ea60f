import { Controller, Get, Header, Param, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ARTIFACT_NAME_PATTERN } from '@stageflow/contracts';
import { ApiErrors, ApiGuardedRoutes, ApiIdParams } from '../core/api-errors.decorator';
import { ParseIdPipe } from '../core/parse-id.pipe';
import { ArtifactListResponseDto } from './artifact.dto';
import { ArtifactsApiService } from './artifacts-api.service';
import { ParseArtifactNamePipe, ParseAttemptPipe } from './parse-artifact-params.pipe';

@ApiTags('artifacts')
@ApiGuardedRoutes()
@Controller('runs/:run/artifacts')
export class ArtifactsController {
  constructor(private readonly artifacts: ArtifactsApiService) {}

  @Get()
  @ApiIdParams('run')
  @ApiOperation({
    summary: "A run's artifacts: screenshots of steps stages and files run stages left in $STAGEFLOW_ARTIFACTS_DIR.",
    description: 'By stage, attempt and name, each with its download path. Empty while a run has none.',
  })
  @ApiOkResponse({ type: ArtifactListResponseDto })
  @ApiErrors({ 400: '`invalid_id`', 404: '`run_not_found`' })
  list(@Param('run', ParseIdPipe) run: string): Promise<ArtifactListResponseDto> {
    return this.artifacts.list(run);
  }

  @Get(':stage/:attempt/:name')
  @ApiIdParams('run', 'stage')
  @ApiParam({ name: 'attempt', schema: { type: 'integer', minimum: 1 } })
  @ApiParam({ name: 'name', schema: { type: 'string', pattern: ARTIFACT_NAME_PATTERN } })
  @ApiOperation({
    summary: 'Download one artifact.',
    description:
      'Always as an attachment, with its content type (unknown and active types such as HTML or SVG as application/octet-stream), `nosniff` and a sandboxing CSP, so an artifact never runs in the api\'s origin.',
  })
  @ApiProduces('application/octet-stream', 'image/png')
  @ApiOkResponse({ description: 'The file.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors({
    400: '`invalid_id`, `invalid_attempt`, `artifact_name_invalid` (the message quotes the name rule)',
    404: '`run_not_found`, `artifact_not_found`',
  })
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', "default-src 'none'; sandbox")
  @Header('Cache-Control', 'private, no-store')
  async download(
    @Param('run', ParseIdPipe) run: string,
    @Param('stage', ParseIdPipe) stage: string,
    @Param('attempt', ParseAttemptPipe) attempt: number,
    @Param('name', ParseArtifactNamePipe) name: string,
  ): Promise<StreamableFile> {
    const file = await this.artifacts.open(run, stage, attempt, name);
    // Names are one safe file name (no quotes, no separators), so the header needs no escaping.
    return new StreamableFile(file.stream, {
      type: file.contentType,
      length: file.sizeBytes,
      disposition: `attachment; filename="${file.name}"`,
    });
  }
}
