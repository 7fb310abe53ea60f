/**
 * The soft allowlist audit a profile stage session owes (Redis hash
 * `sf:browser-allowlist-audit:<sessionId>`), from its open until the runner's
 * activity report is audited or found overdue. Names and ids only.
 */
export interface PendingAllowlistAudit {
  sessionId: string;
  hostId: string;
  runId: string;
  stageId: string;
  attempt: number;
  profile: string;
  scope: string;
  /** The stage's `allow_domains`, from its open request. */
  allowDomains: string[];
}

export function pendingAuditToHash(audit: PendingAllowlistAudit): Record<string, string> {
  return { ...audit, attempt: String(audit.attempt), allowDomains: JSON.stringify(audit.allowDomains) };
}

/** Parses a pending audit hash; `undefined` for an empty or malformed one. */
export function pendingAuditFromHash(hash: Record<string, string>): PendingAllowlistAudit | undefined {
  const { sessionId, hostId, runId, stageId, profile, scope } = hash;
  const attempt = Number(hash['attempt']);
  if (!sessionId || !hostId || !runId || !stageId || !profile || !scope) return undefined;
  if (!Number.isInteger(attempt) || attempt < 1) return undefined;
  let allowDomains: unknown;
  try {
    allowDomains = JSON.parse(hash['allowDomains'] ?? '');
  } catch {
    return undefined;
  }
  if (!Array.isArray(allowDomains) || allowDomains.length === 0 || allowDomains.some((d) => typeof d !== 'string')) return undefined;
  return { sessionId, hostId, runId, stageId, attempt, profile, scope, allowDomains: allowDomains as string[] };
}
