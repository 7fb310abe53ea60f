import { NAVIGATION_HOST } from '@stageflow/contracts';

/** Every audit record type, in the order the docs list them. */
export const AUDIT_RECORD_TYPES = [
  'profile_created',
  'profile_used',
  'profile_deleted',
  'profile_checked',
  'navigation_outside_allowlist',
  'allowlist_unverified',
] as const;

export type AuditRecordType = (typeof AUDIT_RECORD_TYPES)[number];

interface ProfileFields {
  /** ISO 8601 time the Host wrote the record. */
  at: string;
  /** Profile name (never a path). */
  profile: string;
  /** Owner scope, e.g. `local`. */
  scope: string;
}

interface StageFields extends ProfileFields {
  runId: string;
  stageId: string;
}

/** A profile folder (or container volume) was created. */
export interface ProfileCreatedRecord extends ProfileFields {
  type: 'profile_created';
}

/** A run's stage used the profile (once per stage attempt). */
export interface ProfileUsedRecord extends StageFields {
  type: 'profile_used';
}

/** A profile was deleted. */
export interface ProfileDeletedRecord extends ProfileFields {
  type: 'profile_deleted';
  /**
   * What went of the profile's browser data outside its folder: `volume_removed` (the
   * container host's Docker volume) or `none`. A code, never a volume name or path.
   * Absent in records written before it existed.
   */
  browserData?: 'volume_removed' | 'none';
}

/** An operator checked the profile's login outside any run ("Check now"). */
export interface ProfileCheckedRecord extends ProfileFields {
  type: 'profile_checked';
  /** The verdict only: the check page's URL may carry a token, so it is not recorded. */
  result: 'logged_in' | 'logged_out';
}

/** A profile stage navigated (explicitly) to a host outside its soft allow_domains; once per host and stage. */
export interface NavigationOutsideAllowlistRecord extends StageFields {
  type: 'navigation_outside_allowlist';
  /** Host only: a URL's path or query may carry a token. */
  host: string;
}

/** The soft allowlist of a profile stage could not be checked. */
export interface AllowlistUnverifiedRecord extends StageFields {
  type: 'allowlist_unverified';
  /** A snake_case code, e.g. `activity_unreadable`; never free text. */
  reason: string;
}

/** One line of `$STAGEFLOW_HOME/browser/audit.jsonl`. */
export type AuditRecord =
  | ProfileCreatedRecord
  | ProfileUsedRecord
  | ProfileDeletedRecord
  | ProfileCheckedRecord
  | NavigationOutsideAllowlistRecord
  | AllowlistUnverifiedRecord;

type WithoutAt<T> = T extends unknown ? Omit<T, 'at'> : never;

/** What callers pass to {@link AuditLog.append}: a record without `at` (the log's clock sets it). */
export type AuditRecordInput = WithoutAt<AuditRecord>;

/**
 * Shapes of the values a record may hold: names and ids only. Nothing
 * path-like (no "/", "\\" or ".." segment) and nothing long gets through.
 */
export const AUDIT_FIELD_PATTERNS = {
  /** Same rule as a pipeline's `browser.profile`. */
  profile: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  scope: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
  /** Same rule as the contracts' job payload ids. */
  runId: /^[A-Za-z0-9_-]{1,128}$/,
  stageId: /^[A-Za-z0-9_-]{1,128}$/,
  /** A lowercased hostname or IPv4, or a bracketed IPv6 literal: the contract's rule for reported hosts. */
  host: NAVIGATION_HOST,
  reason: /^[a-z][a-z0-9_]{0,63}$/,
  result: /^(?:logged_in|logged_out)$/,
  browserData: /^(?:volume_removed|none)$/,
} as const;

type Field = keyof typeof AUDIT_FIELD_PATTERNS;

const FIELDS: Readonly<Record<AuditRecordType, readonly Field[]>> = {
  profile_created: ['profile', 'scope'],
  profile_used: ['profile', 'scope', 'runId', 'stageId'],
  profile_deleted: ['profile', 'scope'],
  profile_checked: ['profile', 'scope', 'result'],
  navigation_outside_allowlist: ['profile', 'scope', 'runId', 'stageId', 'host'],
  allowlist_unverified: ['profile', 'scope', 'runId', 'stageId', 'reason'],
};

/** Fields a record of the type may leave out (older records do not have them). */
const OPTIONAL_FIELDS: Readonly<Partial<Record<AuditRecordType, readonly Field[]>>> = {
  profile_deleted: ['browserData'],
};

const FIELD_RULE: Readonly<Record<Field, string>> = {
  profile: 'a profile name (letters, digits, ".", "_", "-"; at most 64)',
  scope: 'an owner scope name (letters, digits, ".", "_", "-"; at most 64)',
  runId: 'a run id (letters, digits, "_", "-"; at most 128)',
  stageId: 'a stage id (letters, digits, "_", "-"; at most 128)',
  host: 'a lowercased hostname, without scheme, port or path',
  reason: 'a snake_case reason code such as activity_unreadable',
  result: 'logged_in or logged_out',
  browserData: 'volume_removed or none',
};

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

function isAuditRecordType(value: unknown): value is AuditRecordType {
  return typeof value === 'string' && (AUDIT_RECORD_TYPES as readonly string[]).includes(value);
}

/**
 * What is wrong with a record (with or without `at`), as messages that never
 * echo the offending value: it may be the path or secret that must not be logged.
 */
export function auditRecordProblems(record: unknown, withAt: boolean): string[] {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return ['a record must be an object'];
  const r = record as Record<string, unknown>;
  if (!isAuditRecordType(r['type'])) return [`type must be one of ${AUDIT_RECORD_TYPES.join(', ')}`];
  const fields = FIELDS[r['type']];
  const optional = (OPTIONAL_FIELDS[r['type']] ?? []).filter((field) => r[field] !== undefined);
  const allowed = new Set<string>(['type', ...fields, ...optional, ...(withAt ? ['at'] : [])]);
  const problems: string[] = [];
  for (const key of Object.keys(r)) {
    if (!allowed.has(key)) problems.push(`${key} is not a field of ${r['type']} (records hold names and ids only)`);
  }
  for (const field of [...fields, ...optional]) {
    const value = r[field];
    if (typeof value !== 'string' || !AUDIT_FIELD_PATTERNS[field].test(value)) {
      const got = typeof value === 'string' ? `a string of ${value.length} characters` : typeof value;
      problems.push(`${field} must be ${FIELD_RULE[field]}; got ${got}`);
    }
  }
  if (withAt && (typeof r['at'] !== 'string' || !ISO_TIME.test(r['at'])))
    problems.push('at must be an ISO 8601 UTC time');
  return problems;
}
