import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import { ConflictError, StageflowError, type LoginCheckRequest, type LoginCheckResult } from '@stageflow/contracts';
import { checkStageAgainstBlockedSites, type HostConfig } from '@stageflow/host-config';
import { isCheckHolder, ProfileLeases } from '@stageflow/leases';
import { ProfileNotFoundError, ProfileStore } from '@stageflow/profiles';
import { HOST_CONFIG, OWNER_SCOPE } from '../browsers/browser-host.tokens';
import { sharedBrowserId } from '../browsers/browser-ids';
import { BrowserTabs } from '../browsers/browser-tabs.adapter';
import { HostReadiness } from '../browsers/host-readiness';
import { RunBrowsers } from '../browsers/run-browsers.service';
import { LoginChecks } from './login-check';

/**
 * How long a check may hold the profile's lease: a container start, the check
 * page's load ({@link CHECK_LOAD_TIMEOUT_MS}) and selector wait, a graceful
 * close, with room to spare. Past it, any reclaim takes the lease back, so a
 * check whose browser-host died mid-check frees the profile by then.
 */
export const PROFILE_CHECK_LEASE_TTL_MS = 3 * 60_000;
/** How long a check waits for the startup sweep (which closes browsers of unknown holders) before 503. */
const READY_WAIT_MS = 10_000;

/** The lease calls a check makes; a port so the service is unit-tested without Redis. */
export type CheckLeases = Pick<ProfileLeases, 'holdForCheck' | 'release'>;
/** Where the check's audit record goes; `AuditLog` fits it. */
export type CheckAuditTrail = Pick<AuditLog, 'append'>;
/** Whether the profile exists; `ProfileStore` fits it. */
export type ProfileLookup = Pick<ProfileStore, 'exists'>;

/**
 * "Check now": judges a profile's login outside any run. Holds the profile's
 * lease for the whole time its browser is open (refused, not queued, while a
 * run holds it: an operator is waiting on a button), starts the profile's
 * browser headless on the host the scope's stage browsers use, judges in one
 * tab, closes the browser gracefully so Chrome writes the profile, releases.
 * The answer is `{logged_in, url}`; no path leaves this class.
 */
@Injectable()
export class ProfileChecks {
  private readonly log = new Logger('ProfileChecks');

  constructor(
    private readonly browsers: RunBrowsers,
    private readonly tabs: BrowserTabs,
    private readonly checks: LoginChecks,
    private readonly readiness: HostReadiness,
    @Inject(ProfileStore) private readonly profiles: ProfileLookup,
    @Inject(ProfileLeases) private readonly leases: CheckLeases,
    @Inject(AuditLog) private readonly audit: CheckAuditTrail,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
    @Inject(OWNER_SCOPE) private readonly scope: string,
  ) {}

  /**
   * @throws `blocked_site` (422) before anything starts; `profile_not_found` (404);
   * `profile_leased` (409) naming the holder run; `login_check_*` (422/502) from the page.
   */
  async check(profile: string, criteria: LoginCheckRequest): Promise<LoginCheckResult> {
    checkStageAgainstBlockedSites(this.hostConfig, { stageId: 'profile-check', allowDomains: [], checkUrl: criteria.url });
    await this.readiness.whenReady(READY_WAIT_MS);
    if (!(await this.profiles.exists(this.scope, profile))) throw new ProfileNotFoundError(profile);
    const hold = await this.leases.holdForCheck(this.scope, profile, PROFILE_CHECK_LEASE_TTL_MS);
    if (hold.status === 'busy') throw profileBusy(profile, hold.holder);
    const holderId = hold.grant.runId;
    const ids = { profile, checkId: holderId };
    let result: LoginCheckResult;
    try {
      const { handle } = await this.browsers.shared({ runId: holderId, scope: this.scope, profile, leaseToken: hold.grant.token, headed: false });
      const targetId = await this.tabs.open(handle.wsEndpoint);
      result = await this.checks.checkTab(handle.wsEndpoint, targetId, criteria, { ...ids, browserId: handle.browserId });
    } finally {
      await this.finish(profile, holderId, ids);
    }
    await this.record(profile, result, ids);
    return result;
  }

  private async record(profile: string, result: LoginCheckResult, ids: Record<string, string>): Promise<void> {
    try {
      await this.audit.append({ type: 'profile_checked', profile, scope: this.scope, result: result.logged_in ? 'logged_in' : 'logged_out' });
    } catch (error) {
      // The cause may name the audit file: it goes to the Host's log, the caller gets the profile name only.
      this.log.error({ msg: `Audit record profile_checked not written: ${(error as Error).message}`, ...ids });
      throw new StageflowError(
        'profile_audit_failed',
        `Profile "${profile}" was checked, but the check could not be written to the audit log. ` +
          "Check that the Host's Stageflow home is writable, then check again.",
        500,
        { profile },
      );
    }
  }

  /**
   * Close first, release after: a run granted the lease must not start Chrome on a
   * profile the check's Chrome still writes. When the close fails the lease is left
   * to its deadline (then any reclaim frees it; the startup sweep kills what is left).
   */
  private async finish(profile: string, holderId: string, ids: Record<string, string>): Promise<void> {
    try {
      await this.browsers.close(sharedBrowserId(holderId, this.scope, profile));
    } catch (error) {
      this.log.error({ msg: `The check's browser did not close; the profile stays leased until the check's deadline: ${(error as Error).message}`, ...ids });
      return;
    }
    await this.leases.release(this.scope, profile, holderId).catch((error: Error) =>
      this.log.warn({ msg: `Could not release the check's lease; it frees at the check's deadline: ${error.message}`, ...ids }),
    );
  }
}

/** 409: who holds the profile, in words an operator acts on. */
export function profileBusy(profile: string, holder: { runId: string; since: string }): ConflictError {
  const message = isCheckHolder(holder.runId)
    ? `Browser profile "${profile}" is being checked right now (since ${holder.since}); wait a moment and check again.`
    : `Browser profile "${profile}" is in use by run ${holder.runId} (since ${holder.since}), so it cannot be checked now: ` +
      `a run's stages report the login themselves. Wait until run ${holder.runId} ends, or cancel it, then check again.`;
  return new ConflictError('profile_leased', message, { profile, holder: { runId: holder.runId, since: holder.since } });
}
