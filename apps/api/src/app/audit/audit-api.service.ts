import { Inject, Injectable } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import { AuditPageResponseDto, type AuditQueryDto } from './audit.dto';

/** Reads the Host's profile audit log for `GET /api/audit`. */
@Injectable()
export class AuditApiService {
  constructor(@Inject(AuditLog) private readonly log: AuditLog) {}

  async query(q: AuditQueryDto): Promise<AuditPageResponseDto> {
    const page = await this.log.query({
      type: q.type,
      profile: q.profile,
      runId: q.run,
      since: q.since,
      until: q.until,
      limit: q.limit,
      cursor: q.cursor,
    });
    return AuditPageResponseDto.from(page);
  }
}
