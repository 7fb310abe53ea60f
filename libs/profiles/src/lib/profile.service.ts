import { Logger } from '@nestjs/common';
import type { AuditRecordInput } from '@stageflow/audit';
import { ProfileAuditFailedError, ProfileLeasedError, ProfileNotFoundError } from './profile.errors';
import type { ProfileStore } from './profile.store';
import type { LeasedProfile, ProfileInfo, ProfileLease } from './profile.types';

/**
 * What the service reads from the profile leases: `ProfileLeases.describe`
 * of `@stageflow/leases` fits it. A port rather than the class, because a
 * data-access lib may not import another one; the app wires the real one in.
 */
export interface ProfileLeaseReader {
  describe(
    scope: string,
    profile: string,
  ): Promise<{ holder?: { runId: string; since: string }; waiters: { runId: string; since: string }[] }>;
}

/** What removing a profile's browser data outside its folder did (`volume_removed` or `none`); goes into `profile_deleted`. */
export type BrowserDataOutcome = 'volume_removed' | 'none';

/** Where profile audit records go: `AuditLog` of `@stageflow/audit`. */
export interface ProfileAuditTrail {
  append(record: AuditRecordInput): Promise<unknown>;
}

/**
 * Profiles as the api offers them: the store's folders, each with its lease
 * (holder and queue, no fencing token), and an audit record for every
 * profile created or deleted. A profile a run holds or waits for is never
 * deleted.
 */
export class ProfileService {
  private readonly log = new Logger(ProfileService.name);

  constructor(
    private readonly store: ProfileStore,
    private readonly leases: ProfileLeaseReader,
    private readonly audit: ProfileAuditTrail,
  ) {}

  /** Creates an empty profile and audits `profile_created`. */
  async create(scope: string, name: string): Promise<ProfileInfo> {
    const profile = await this.store.create(scope, name);
    await this.record({ type: 'profile_created', profile: name, scope }, 'created');
    return profile;
  }

  /** Every profile of the scope by name, each with its lease. */
  async list(scope: string): Promise<LeasedProfile[]> {
    const profiles = await this.store.list(scope);
    return Promise.all(profiles.map(async (p) => ({ ...p, lease: await this.lease(scope, p.name) })));
  }

  /** One profile with its size and lease. @throws ProfileNotFoundError (404) */
  async get(scope: string, name: string): Promise<LeasedProfile> {
    const profile = await this.store.get(scope, name);
    return { ...profile, lease: await this.lease(scope, name) };
  }

  /**
   * Deletes the profile folder and audits `profile_deleted`.
   *
   * Refused with `profile_leased` (409, naming the runs) while a run holds
   * the lease, and also while runs only wait for it: the lease would reach
   * them a moment later, for a login that is gone.
   *
   * The lease is read before the folder goes, not locked across the delete:
   * a run granted the profile in between finds no folder. Holding the lease
   * ourselves would need a run id the engine does not know, and would wake
   * other processes' grant listeners for it.
   *
   * `removeBrowserData`, when given, runs after those checks and before the folder
   * goes: it removes the profile's browser data kept elsewhere (the container host's
   * volume) and says what it removed, for the audit record. If it throws, the profile
   * is kept, folder and all, and its error is the caller's.
   *
   * @throws ProfileNotFoundError (404), ProfileLeasedError (409)
   */
  async delete(scope: string, name: string, removeBrowserData?: () => Promise<BrowserDataOutcome>): Promise<void> {
    if (!(await this.store.exists(scope, name))) throw new ProfileNotFoundError(name);
    const lease = await this.lease(scope, name);
    if (lease.holder || lease.waiters.length > 0) throw new ProfileLeasedError(name, lease);
    const browserData = removeBrowserData ? await removeBrowserData() : undefined;
    await this.store.delete(scope, name);
    await this.record({ type: 'profile_deleted', profile: name, scope, ...(browserData ? { browserData } : {}) }, 'deleted');
  }

  /** The lease without what stays inside the Host (fencing token, queue ticket). */
  private async lease(scope: string, name: string): Promise<ProfileLease> {
    const state = await this.leases.describe(scope, name);
    const lease: ProfileLease = { waiters: state.waiters.map((w) => ({ runId: w.runId, since: w.since })) };
    if (state.holder) lease.holder = { runId: state.holder.runId, since: state.holder.since };
    return lease;
  }

  private async record(record: AuditRecordInput, action: 'created' | 'deleted'): Promise<void> {
    try {
      await this.audit.append(record);
    } catch (e) {
      // The cause may name the audit file: it goes to the Host's log, the client gets the profile name only.
      const err = e instanceof Error ? e : new Error(String(e));
      this.log.error(`Audit record ${record.type} for profile ${record.profile} not written: ${err.message}`, err.stack);
      throw new ProfileAuditFailedError(record.profile, action);
    }
  }
}
