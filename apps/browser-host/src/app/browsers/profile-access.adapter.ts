import { Injectable, Logger } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import { StageflowError } from '@stageflow/contracts';
import { ProfileExistsError, ProfileService, ProfileStore } from '@stageflow/profiles';

/** A stage's use of a profile, for the audit record. */
export interface ProfileUse {
  scope: string;
  profile: string;
  runId: string;
  stageId: string;
}

/**
 * The profile store and audit log as browser-host needs them: the folder a shared
 * browser starts on (and nothing else ever sees), a profile created on first use, and
 * `profile_used` in `$STAGEFLOW_HOME/browser/audit.jsonl`.
 */
export abstract class ProfileAccess {
  /** Creates the profile (audited `profile_created`) if the stage names one that does not exist yet: its first login. */
  abstract ensure(scope: string, profile: string): Promise<void>;
  /** Audits `profile_used`; throws `profile_audit_failed` (500) so no browser is handed out unaudited. */
  abstract recordUse(use: ProfileUse): Promise<void>;
  /** The profile folder, for Chromium's `--user-data-dir` only. */
  abstract folder(scope: string, profile: string): Promise<string>;
}

/** {@link ProfileAccess} on `@stageflow/profiles` and `@stageflow/audit`. */
@Injectable()
export class StoreProfileAccess extends ProfileAccess {
  private readonly log = new Logger('ProfileAccess');

  constructor(
    private readonly store: ProfileStore,
    private readonly profiles: ProfileService,
    private readonly audit: AuditLog,
  ) {
    super();
  }

  async ensure(scope: string, profile: string): Promise<void> {
    if (await this.store.exists(scope, profile)) return;
    try {
      await this.profiles.create(scope, profile);
      this.log.log({ msg: 'Created a browser profile for its first use', profile, scope });
    } catch (error) {
      // Another stage (or the api) created it a moment ago: that is the same profile.
      if (!(error instanceof ProfileExistsError)) throw error;
    }
  }

  async recordUse(use: ProfileUse): Promise<void> {
    try {
      await this.audit.append({ type: 'profile_used', ...use });
    } catch (error) {
      // The cause may name the audit file; it goes to the Host's log, the caller gets names only.
      this.log.error({ msg: `Audit record profile_used not written: ${(error as Error).message}`, ...use });
      throw new StageflowError(
        'profile_audit_failed',
        `The use of profile "${use.profile}" could not be written to the audit log, so no browser was opened. ` +
          "Check that the Host's Stageflow home is writable, then retry the stage.",
        500,
        { profile: use.profile },
      );
    }
  }

  folder(scope: string, profile: string): Promise<string> {
    return this.store.pathFor(scope, profile);
  }
}
