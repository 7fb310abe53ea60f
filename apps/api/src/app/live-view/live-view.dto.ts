import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { LIVE_VIEW_LIMITS, LIVE_VIEW_MODES, type LiveViewMode, type LiveViewTicket } from '@stageflow/contracts';
import { IsIn, IsOptional } from 'class-validator';

export class LiveViewTicketRequestDto {
  @ApiPropertyOptional({
    enum: LIVE_VIEW_MODES,
    default: 'interactive',
    description: '`interactive` sees the page and may control it (the gate asks for this); `view-only` sees it, and the relay refuses its input (Watch browser).',
  })
  @IsOptional()
  @IsIn(LIVE_VIEW_MODES, { message: `mode must be one of ${LIVE_VIEW_MODES.join(', ')}` })
  mode?: LiveViewMode;
}

export class LiveViewTicketResponseDto implements LiveViewTicket {
  @ApiProperty({
    description: `Connect once, within ${LIVE_VIEW_LIMITS.ticketTtlSeconds} s, to \`ws://<api><path>?ticket=<ticket>\`. Keep it out of logs and history.`,
    example: 'h3Zk0Qy3mJ0bXv2y9X6fZ1l1cYq3Jm1nQ5n0m3k2Z4s',
  })
  ticket!: string;

  @ApiProperty({ enum: LIVE_VIEW_MODES })
  mode!: LiveViewMode;

  @ApiProperty({ format: 'date-time', description: 'After this an unused ticket is void.' })
  expiresAt!: string;

  @ApiProperty({ example: '/api/runs/m1x2y3-ab12cd34ef/stages/login/live-view', description: 'The WebSocket path: the gate\'s stable live-view path.' })
  path!: string;
}
