import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { LIVE_VIEW_LIMITS } from '@stageflow/contracts';
import { ApiErrors, ApiGuardedRoutes, ApiIdParams } from '../core/api-errors.decorator';
import { ParseIdPipe } from '../core/parse-id.pipe';
import { LiveViewTicketRequestDto, LiveViewTicketResponseDto } from './live-view.dto';
import { LiveViewService } from './live-view.service';

@ApiTags('live view')
@ApiGuardedRoutes()
@Controller('runs')
export class LiveViewController {
  constructor(private readonly liveView: LiveViewService) {}

  @Post(':run/stages/:stage/live-view/tickets')
  @HttpCode(HttpStatus.CREATED)
  @ApiIdParams('run', 'stage')
  @ApiOperation({
    summary: 'A short-lived, single-use ticket for the live view of a running browser stage.',
    description:
      `Connect a WebSocket to \`path?ticket=<ticket>\` within ${LIVE_VIEW_LIMITS.ticketTtlSeconds} s; the api forwards it to the live view relay, ` +
      'which checks the ticket. The protocol is in docs/live-view.md.',
  })
  @ApiCreatedResponse({ type: LiveViewTicketResponseDto })
  @ApiErrors({
    400: '`invalid_id`, `invalid_request` (mode), `invalid_json`',
    404: '`run_not_found`, `stage_not_found`',
    409: '`live_view_unavailable` (the stage has no open browser), `live_view_closed` (interactive, gate answered), `run_finished`',
    413: '`body_too_large`',
    415: '`unsupported_media_type`',
  })
  issue(
    @Param('run', ParseIdPipe) run: string,
    @Param('stage', ParseIdPipe) stage: string,
    @Body() dto: LiveViewTicketRequestDto,
  ): Promise<LiveViewTicketResponseDto> {
    return this.liveView.issue(run, stage, dto.mode ?? 'interactive');
  }
}
