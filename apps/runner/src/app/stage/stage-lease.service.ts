import { Injectable, Logger } from '@nestjs/common';
import type { StageJobPayload } from '@stageflow/contracts';
import { StageAttempts } from '@stageflow/engine';
import { LeaseGrant, ProfileLeases, waitingReason } from '@stageflow/leases';

/** Leases of this runner are taken on local browser profiles (docs/leases.md: scope `local`). */
export const LOCAL_LEASE_SCOPE = 'local';

/** What the worker does with a stage job after asking for its profile's lease. */
export type LeaseAdmission =
  | { outcome: 'go'; grant?: LeaseGrant }
  | { outcome: 'parked'; reason: string }
  | { outcome: 'drop'; reason: string };

/**
 * The browser-profile lease as the runner sees it: a stage with
 * `browser.profile` runs only while its run holds the profile's lease; else
 * it is parked (`waiting`, no slot, no job) until a grant wakes it. Release
 * is browser-host's job at run end (it calls `releaseRun`).
 */
@Injectable()
export class StageLease {
  private readonly logger = new Logger('StageLease');
  private listening?: Promise<unknown>;

  constructor(
    private readonly leases: ProfileLeases,
    private readonly attempts: StageAttempts,
  ) {}

  /** Registers the grant listener once per process (before the worker takes jobs). */
  listen(): Promise<unknown> {
    this.listening ??= this.leases.onGranted((grant) => void this.onGrant(grant));
    return this.listening;
  }

  async admit(job: StageJobPayload): Promise<LeaseAdmission> {
    const profile = await this.attempts.leaseProfile(job);
    if (!profile) return { outcome: 'go' };
    // A late or duplicate job of an ended run must not take or queue for the
    // lease (nobody would release it): the claim drops it.
    if (!(await this.attempts.isRunOpen(job.runId))) return { outcome: 'go' };
    const outcome = await this.leases.acquire(LOCAL_LEASE_SCOPE, profile, job.runId);
    if (outcome.status === 'granted') return { outcome: 'go', grant: outcome.grant };
    const reason = waitingReason(profile, outcome.holder);
    if ((await this.attempts.parkForLease(job, profile, reason)) === 'stale') {
      return { outcome: 'drop', reason: 'the stage was no longer queued when its lease was queued' };
    }
    // A grant published between acquire and the park (a release, or the
    // reclaim acquire starts) found the stage still queued and woke nothing:
    // ask again now that it is parked. Waking queues a job under a new id
    // (StageJobPayload.wake), so it need not wait for this one to complete.
    await this.wakeIfGranted(job.runId, profile);
    return { outcome: 'parked', reason };
  }

  private async wakeIfGranted(runId: string, profile: string): Promise<void> {
    try {
      const again = await this.leases.acquire(LOCAL_LEASE_SCOPE, profile, runId);
      if (again.status === 'granted') await this.attempts.wakeLeaseWaiters(runId, profile);
    } catch (error) {
      this.logger.warn({ runId, profile, msg: `could not re-check the lease after parking: ${(error as Error).message}` });
    }
  }

  /**
   * The run ended (a cancel message): takes it out of the queues of its
   * profiles at once. Every runner hears the message; withdrawing twice is a
   * no-op. Should this be missed, the grant listener hands the lease on when
   * the ended run's turn comes.
   */
  async withdrawRun(runId: string): Promise<void> {
    try {
      if (await this.attempts.isRunOpen(runId)) return;
      for (const profile of await this.attempts.leaseProfiles(runId)) {
        if (await this.leases.withdraw(LOCAL_LEASE_SCOPE, profile, runId)) {
          this.logger.log({ runId, profile, msg: 'run ended while waiting for the profile; withdrawn from its queue' });
        }
      }
    } catch (error) {
      this.logger.warn({ runId, msg: `could not withdraw the run from lease queues: ${(error as Error).message}` });
    }
  }

  private async onGrant(grant: LeaseGrant): Promise<void> {
    if (grant.scope !== LOCAL_LEASE_SCOPE) return;
    const ids = { runId: grant.runId, profile: grant.profile };
    try {
      if (!(await this.attempts.isRunOpen(grant.runId))) {
        // The run ended while it waited (cancelled): hand the profile on.
        await this.leases.release(grant.scope, grant.profile, grant.runId);
        return;
      }
      const woken = await this.attempts.wakeLeaseWaiters(grant.runId, grant.profile);
      if (woken.length) this.logger.log({ ...ids, msg: `lease granted; re-queued ${woken.join(', ')}` });
    } catch (error) {
      this.logger.error({ ...ids, msg: `could not wake stages after a lease grant: ${(error as Error).message}` });
    }
  }
}
