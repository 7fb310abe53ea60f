import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIT_FIELD_PATTERNS, AUDIT_QUERY_MAX_LIMIT, AUDIT_RECORD_TYPES, type AuditPage, type AuditRecord, type AuditRecordType } from '@stageflow/audit';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { ID_PATTERN } from '../core/parse-id.pipe';

/** Query of `GET /api/audit`. The audit lib checks it again (`audit_query_invalid`), e.g. the cursor. */
export class AuditQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_RECORD_TYPES })
  @IsOptional()
  @IsIn(AUDIT_RECORD_TYPES)
  type?: AuditRecordType;

  @ApiPropertyOptional({ description: 'Only records of this profile.', pattern: AUDIT_FIELD_PATTERNS.profile.source })
  @IsOptional()
  @IsString()
  @Matches(AUDIT_FIELD_PATTERNS.profile, { message: 'profile must be a profile name (letters, digits, ".", "_" or "-")' })
  profile?: string;

  @ApiPropertyOptional({ description: 'Only records of this run.' })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'run must be a run id (letters, digits, "_" or "-")' })
  run?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Records at or after this time.', example: '2024-05-01T00:00:00Z' })
  @IsOptional()
  @IsString()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 time such as 2024-05-01T00:00:00Z' })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Records before this time.' })
  @IsOptional()
  @IsString()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 time such as 2024-05-02T00:00:00Z' })
  until?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: AUDIT_QUERY_MAX_LIMIT, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(AUDIT_QUERY_MAX_LIMIT)
  limit = 100;

  @ApiPropertyOptional({ description: 'The `next` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  cursor?: string;
}

/** One audit record: names and ids only, never a path or a value. */
export class AuditRecordDto {
  @ApiProperty({ format: 'date-time', description: 'When the Host wrote it.' })
  at!: string;
  @ApiProperty({ enum: AUDIT_RECORD_TYPES })
  type!: AuditRecordType;
  @ApiProperty({ example: 'work' })
  profile!: string;
  @ApiProperty({ example: 'local' })
  scope!: string;
  @ApiPropertyOptional({ description: 'Stage records: the run.' })
  runId?: string;
  @ApiPropertyOptional({ description: 'Stage records: the stage.' })
  stageId?: string;
  @ApiPropertyOptional({ description: '`navigation_outside_allowlist`: the host navigated to (host only).' })
  host?: string;
  @ApiPropertyOptional({ description: '`allowlist_unverified`: why, as a code.' })
  reason?: string;
  @ApiPropertyOptional({ enum: ['logged_in', 'logged_out'], description: '`profile_checked`: the verdict of "Check now" (its URL is not recorded).' })
  result?: 'logged_in' | 'logged_out';
  @ApiPropertyOptional({
    enum: ['volume_removed', 'none'],
    description: '`profile_deleted`: what went of the browser data outside the folder (`volume_removed`: the container host\'s Docker volume). Absent in older records.',
  })
  browserData?: 'volume_removed' | 'none';

  static from(r: AuditRecord): AuditRecordDto {
    const dto: AuditRecordDto = { at: r.at, type: r.type, profile: r.profile, scope: r.scope };
    if ('runId' in r) Object.assign(dto, { runId: r.runId, stageId: r.stageId });
    if ('host' in r) dto.host = r.host;
    if ('reason' in r) dto.reason = r.reason;
    if ('result' in r) dto.result = r.result;
    if ('browserData' in r && r.browserData) dto.browserData = r.browserData;
    return dto;
  }
}

export class AuditPageResponseDto {
  @ApiProperty({ type: [AuditRecordDto], description: 'Newest first.' })
  items!: AuditRecordDto[];
  @ApiPropertyOptional({ description: 'Pass as `cursor` for older records; absent on the last page.' })
  next?: string;

  static from(page: AuditPage): AuditPageResponseDto {
    const items = page.records.map((r) => AuditRecordDto.from(r));
    return page.nextCursor === undefined ? { items } : { items, next: page.nextCursor };
  }
}
