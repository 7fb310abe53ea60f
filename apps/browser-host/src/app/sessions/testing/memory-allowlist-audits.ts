import type { AuditRecord, AuditRecordInput } from '@stageflow/audit';
import type { PendingAllowlistAudit } from '../allowlist-audit-record';
import type { AllowlistAuditRepository } from '../allowlist-audits.repository';
import { AllowlistAudits, type AllowlistAuditTiming } from '../allowlist-audits.service';
import type { SessionRegistry } from '../session-registry.repository';
import { StageActivity } from '../stage-activity.adapter';

/**
 * Test doubles for the soft allowlist audit (unit tier: no Redis, no files): the pending
 * audits and the run's audited hosts in memory, and an audit log that keeps its records.
 */
export class MemoryAllowlistAuditRepository {
  readonly pending = new Map<string, PendingAllowlistAudit>();
  readonly due = new Map<string, number>();
  readonly audited = new Map<string, Set<string>>();

  async put(audit: PendingAllowlistAudit): Promise<void> {
    this.pending.set(audit.sessionId, { ...audit });
    this.due.set(audit.sessionId, Infinity);
  }
  async dueAt(sessionId: string, at: number): Promise<void> {
    if (this.due.has(sessionId)) this.due.set(sessionId, at);
  }
  async take(sessionId: string): Promise<PendingAllowlistAudit | undefined> {
    const audit = this.pending.get(sessionId);
    this.pending.delete(sessionId);
    this.due.delete(sessionId);
    return audit;
  }
  async overdue(now: number): Promise<string[]> {
    return [...this.due].filter(([, at]) => at <= now).map(([id]) => id);
  }
  async open(): Promise<string[]> {
    return [...this.due].filter(([, at]) => at === Infinity).map(([id]) => id);
  }
  async firstForStage(runId: string, stageId: string, host: string): Promise<boolean> {
    const set = this.audited.get(runId) ?? new Set<string>();
    this.audited.set(runId, set);
    const before = set.size;
    set.add(`${stageId} ${host}`);
    return set.size > before;
  }
  async forgetForStage(runId: string, stageId: string, host: string): Promise<void> {
    this.audited.get(runId)?.delete(`${stageId} ${host}`);
  }
  async forgetRun(runId: string): Promise<void> {
    this.audited.delete(runId);
  }
  asRepository(): AllowlistAuditRepository {
    return this as unknown as AllowlistAuditRepository;
  }
}

export class MemoryAuditLog {
  readonly records: AuditRecord[] = [];
  failing = false;
  async append(record: AuditRecordInput): Promise<AuditRecord> {
    if (this.failing) throw new Error("EACCES: permission denied, open '/home/someone/.stageflow/browser/audit.jsonl'");
    const written = { at: '2024-05-01T10:00:00.000Z', ...record } as AuditRecord;
    this.records.push(written);
    return written;
  }
}

export class NotedActivity extends StageActivity {
  readonly lines: Array<{ stageId: string; attempt: number; line: string }> = [];
  async note(_runId: string, stageId: string, attempt: number, line: string): Promise<void> {
    this.lines.push({ stageId, attempt, line });
  }
}

/** {@link AllowlistAudits} over the doubles above; `sessions` answers whether a session is still registered. */
export function memoryAllowlistAudits(
  sessions: Pick<SessionRegistry, 'get'>,
  timing: AllowlistAuditTiming = { reportGraceMs: 1000, sweepMs: 60_000 },
) {
  const repo = new MemoryAllowlistAuditRepository();
  const log = new MemoryAuditLog();
  const activity = new NotedActivity();
  const audits = new AllowlistAudits(repo.asRepository(), sessions as SessionRegistry, log, activity, timing);
  return { audits, repo, log, activity };
}
