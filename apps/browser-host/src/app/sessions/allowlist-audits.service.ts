import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditLog, isHostAllowed } from '@stageflow/audit';
import { NotFoundError, StageflowError, type StageActivityReport } from '@stageflow/contracts';
import { KeyedMutex } from '../browsers/keyed-mutex';
import type { PendingAllowlistAudit } from './allowlist-audit-record';
import { AllowlistAuditRepository } from './allowlist-audits.repository';
import { SessionRegistry } from './session-registry.repository';
import type { SessionRecord } from './session-record';
import { StageActivity } from './stage-activity.adapter';

/** Appending to `$STAGEFLOW_HOME/browser/audit.jsonl`; a port so the service is tested without files. */
export type AuditWriter = Pick<AuditLog, 'append'>;

/** When a missing report counts as lost, and how often that is checked. */
export interface AllowlistAuditTiming {
  /**
   * How long after its session closed the runner's report may still come. A cancel
   * closes the session first (the stage's end event) while the runner still stops the
   * process (its kill grace, 5 s by default) and then reads the activity.
   * @defaultValue 120000
   */
  reportGraceMs: number;
  /** @defaultValue 15000 */
  sweepMs: number;
}

/** Nest token for {@link AllowlistAuditTiming}. */
export const ALLOWLIST_AUDIT_TIMING = Symbol('ALLOWLIST_AUDIT_TIMING');
export const DEFAULT_ALLOWLIST_AUDIT_TIMING: AllowlistAuditTiming = { reportGraceMs: 120_000, sweepMs: 15_000 };

/** `reason` of `allowlist_unverified` when the runner never reported (it died, or could not reach browser-host). */
export const REPORT_OVERDUE = 'activity_not_reported';

/** The hosts of a report that `allowDomains` does not allow, in order: the pure part of the audit. */
export function hostsOutside(report: StageActivityReport, allowDomains: readonly string[]): string[] {
  return report.navigationHosts.filter((host) => !isHostAllowed(host, allowDomains));
}

/**
 * browser-host's half of the soft allowlist audit of profile stages (docs/redaction-and-audit.md).
 * A profile session with `allow_domains` owes an audit from its open; the runner's activity
 * report (hosts its stage explicitly opened with agent-browser) settles it: each host outside
 * the list becomes `navigation_outside_allowlist`, once per host and stage (across attempts), and
 * a reason the hosts are incomplete becomes `allowlist_unverified`. A report that has not come
 * {@link AllowlistAuditTiming.reportGraceMs} after the session closed is recorded as
 * `allowlist_unverified` (`activity_not_reported`). The stage's history gets a line naming the
 * hosts; records and lines hold names only.
 */
@Injectable()
export class AllowlistAudits {
  private readonly log = new Logger('AllowlistAudits');
  private readonly mutex = new KeyedMutex();
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;

  constructor(
    private readonly repo: AllowlistAuditRepository,
    private readonly registry: SessionRegistry,
    @Inject(AuditLog) private readonly audit: AuditWriter,
    private readonly activity: StageActivity,
    @Inject(ALLOWLIST_AUDIT_TIMING) private readonly timing: AllowlistAuditTiming,
  ) {}

  /** Whether a session's navigations are audited: a profile's shared browser with a non-empty `allow_domains`. */
  static audits(record: Pick<SessionRecord, 'kind' | 'profile'>, allowDomains: readonly string[]): boolean {
    return record.kind === 'shared' && !!record.profile && allowDomains.length > 0;
  }

  /**
   * A session to audit opened: its report is expected. Throws `allowlist_audit_failed`
   * (500) so no profile browser is handed out whose audit could not be set up.
   */
  async expect(record: SessionRecord, allowDomains: string[]): Promise<void> {
    const { sessionId, hostId, runId, stageId, attempt, profile, scope } = record;
    if (!profile || !scope) throw new Error(`session ${sessionId} has no profile to audit`);
    try {
      await this.repo.put({ sessionId, hostId, runId, stageId, attempt, profile, scope, allowDomains });
    } catch (error) {
      this.log.error({ msg: `Could not set up the allowlist audit: ${(error as Error).message}`, runId, stageId, profile, sessionId });
      throw new StageflowError(
        'allowlist_audit_failed',
        `The allow_domains audit of stage "${stageId}" could not be set up, so no browser was opened. Check that Redis answers, then retry the stage.`,
        500,
      );
    }
  }

  /** The session closed (runner, watcher, run end, sweep): its report is overdue after the grace. */
  async sessionClosed(sessionId: string): Promise<void> {
    await this.repo.dueAt(sessionId, Date.now() + this.timing.reportGraceMs);
  }

  /**
   * Audits the runner's report for a session. Throws `allowlist_audit_not_found` (404) when
   * no audit is pending: already audited, already recorded as overdue, or not a session
   * whose navigations are audited; `allowlist_audit_failed` (500) when a record could not be written.
   */
  async report(sessionId: string, report: StageActivityReport): Promise<void> {
    await this.mutex.run(sessionId, async () => {
      const pending = await this.repo.take(sessionId);
      if (!pending) {
        throw new NotFoundError(
          'allowlist_audit_not_found',
          `Stage session "${sessionId}" has no allowlist audit pending: its report was already audited or is past its ` +
            `${Math.round(this.timing.reportGraceMs / 1000)} s grace (recorded as allowlist_unverified), or it is not a profile stage with allow_domains.`,
        );
      }
      await this.settle(pending, report);
    });
  }

  /** Records every audit whose report is overdue; also starts the grace of audits whose session is gone unnoticed. */
  async expireOverdue(now = Date.now()): Promise<number> {
    for (const sessionId of await this.repo.open()) {
      if (!(await this.registry.get(sessionId))) await this.repo.dueAt(sessionId, now + this.timing.reportGraceMs);
    }
    let expired = 0;
    for (const sessionId of await this.repo.overdue(now)) {
      await this.mutex.run(sessionId, async () => {
        const pending = await this.repo.take(sessionId);
        if (!pending) return;
        expired++;
        await this.settle(pending, { navigationHosts: [] }, REPORT_OVERDUE).catch((error: Error) =>
          this.log.error({ msg: error.message, runId: pending.runId, stageId: pending.stageId, sessionId }),
        );
      });
    }
    return expired;
  }

  /** The run ended: its (stage, host) memory goes (a late report of it still dedupes within itself). */
  async runEnded(runId: string): Promise<void> {
    await this.repo.forgetRun(runId);
  }

  /** Checks for overdue reports every {@link AllowlistAuditTiming.sweepMs}, from the end of the startup sweep. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.expireOverdue()
        .catch((error: Error) => this.log.warn({ msg: `Checking for overdue allowlist reports failed: ${error.message}; retrying` }))
        .finally(() => (this.sweeping = undefined));
    }, this.timing.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private async settle(pending: PendingAllowlistAudit, report: StageActivityReport, overdue?: string): Promise<void> {
    const { runId, stageId, attempt, profile, scope, sessionId } = pending;
    const stage = { profile, scope, runId, stageId };
    const outside = hostsOutside(report, pending.allowDomains);
    const unverified = overdue ?? report.unverified;
    const failures: string[] = [];
    for (const host of outside) {
      if (!(await this.repo.firstForStage(runId, stageId, host))) continue;
      try {
        await this.audit.append({ type: 'navigation_outside_allowlist', ...stage, host });
      } catch (error) {
        failures.push((error as Error).message);
        await this.repo.forgetForStage(runId, stageId, host).catch(() => undefined);
      }
    }
    if (unverified) {
      await this.audit.append({ type: 'allowlist_unverified', ...stage, reason: unverified }).catch((error: Error) => failures.push(error.message));
    }
    const ids = { runId, stageId, attempt, profile, sessionId };
    if (outside.length > 0) {
      this.log.warn({ ...ids, msg: 'A profile stage opened hosts outside its allow_domains (audited, not enforced)', hosts: outside });
      await this.note(pending, `browser-host: this stage opened hosts outside allow_domains: ${outside.join(', ')}. Recorded in the audit log; allow_domains is not enforced for profile stages.`);
    }
    if (unverified) {
      this.log.warn({ ...ids, msg: `The stage's navigations could not be checked against allow_domains (${unverified})` });
      await this.note(pending, `browser-host: could not check this stage's agent-browser navigations against allow_domains (${unverified}); recorded as allowlist_unverified.`);
    }
    if (failures.length > 0) {
      // The causes may name the audit file: the Host's log gets them, the runner names only.
      this.log.error({ ...ids, msg: `Allowlist audit records not written: ${failures.join('; ')}` });
      throw new StageflowError(
        'allowlist_audit_failed',
        `${failures.length} allowlist audit record(s) of stage "${stageId}" could not be written. Check that the Host's Stageflow home is writable.`,
        500,
      );
    }
  }

  /** Awaited, so the line is in the history before the runner records the attempt's end (then it would be dropped). */
  private async note(pending: PendingAllowlistAudit, line: string): Promise<void> {
    await this.activity
      .note(pending.runId, pending.stageId, pending.attempt, line)
      .catch((error: Error) => this.log.debug({ msg: `Allowlist line not added to the run's history: ${error.message}`, runId: pending.runId, stageId: pending.stageId }));
  }
}
