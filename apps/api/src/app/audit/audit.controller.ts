import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, ApiGuardedRoutes } from '../core/api-errors.decorator';
import { AuditPageResponseDto, AuditQueryDto } from './audit.dto';
import { AuditApiService } from './audit-api.service';

@ApiTags('audit')
@ApiGuardedRoutes()
@Controller('audit')
export class AuditController {
  constructor(private readonly audit: AuditApiService) {}

  @Get()
  @ApiOperation({
    summary: 'The browser profile audit log, newest first: profiles created, used and deleted, soft-allowlist findings.',
    description: 'Records hold names and ids only. Page with `limit` and the `next` of the previous page as `cursor`.',
  })
  @ApiOkResponse({ type: AuditPageResponseDto })
  @ApiErrors({ 400: '`invalid_request`; `audit_query_invalid` (e.g. a cursor this api did not hand out)' })
  query(@Query() query: AuditQueryDto): Promise<AuditPageResponseDto> {
    return this.audit.query(query);
  }
}
