import { StageflowError } from '@stageflow/contracts';

/**
 * A record handed to {@link AuditLog.append} holds something other than names
 * and ids. A Host bug: the record is refused rather than written.
 */
export class AuditRecordInvalidError extends StageflowError {
  constructor(readonly problems: string[]) {
    super('audit_record_invalid', `The audit record was refused: ${problems.join('; ')}.`, 500, { problems });
    this.name = 'AuditRecordInvalidError';
  }
}

/** A `GET /api/audit` filter is malformed; the message says which one and what it accepts. */
export class AuditQueryInvalidError extends StageflowError {
  constructor(readonly problems: string[]) {
    super('audit_query_invalid', `The audit query is invalid: ${problems.join('; ')}.`, 400, { problems });
    this.name = 'AuditQueryInvalidError';
  }
}
