export type {
  AllowlistUnverifiedRecord,
  AuditRecord,
  AuditRecordInput,
  AuditRecordType,
  NavigationOutsideAllowlistRecord,
  ProfileCreatedRecord,
  ProfileDeletedRecord,
  ProfileUsedRecord,
} from './lib/audit-record';
export { AUDIT_FIELD_PATTERNS, AUDIT_RECORD_TYPES } from './lib/audit-record';
export { AuditQueryInvalidError, AuditRecordInvalidError } from './lib/audit.errors';
export type { AuditFs } from './lib/audit-fs';
export { nodeAuditFs } from './lib/audit-fs';
export type { AuditClock, AuditPage, AuditQuery } from './lib/audit-log';
export { AUDIT_QUERY_MAX_LIMIT, AuditLog, auditLogPath } from './lib/audit-log';
export {
  AGENT_BROWSER_NAVIGATION_WORDS,
  AGENT_BROWSER_OPTIONAL_VALUE_FLAGS,
  AGENT_BROWSER_VALUE_FLAGS,
  agentBrowserNavigation,
  extractNavigations,
  hostsOutsideAllowlist,
  isHostAllowed,
  navigationHost,
} from './lib/navigation-audit';
