import { ConflictError, NotFoundError, StageflowError } from '@stageflow/contracts';
import type { ProfileLease } from './profile.types';

/**
 * Every message here may reach an API client, so none holds a path: a profile
 * is named by its name only (see docs/profiles.md).
 */

/** The pattern as clients read it (kept in step with PROFILE_NAME_PATTERN by a unit test). */
export const PROFILE_NAME_RULE = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

function shown(value: unknown): string {
  if (typeof value !== 'string') return `(a ${value === null ? 'null' : typeof value}, not a string)`;
  // JSON escapes control characters and NUL, so the message stays one readable line.
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** A profile name from YAML or API input is not one safe folder name. */
export class ProfileNameError extends StageflowError {
  constructor(name: unknown) {
    super(
      'profile_name_invalid',
      `Browser profile name ${shown(name)} is not valid: a profile name must match ${PROFILE_NAME_RULE} and hold no "..", ` +
        'that is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit (no "/", "\\", spaces or leading dot). ' +
        'Choose a name such as "work" or "github-main".',
      400,
      { pattern: PROFILE_NAME_RULE },
    );
    this.name = 'ProfileNameError';
  }
}

/** The Host was configured with a scope that is not a safe folder name: a Host bug, not a client error. */
export class ProfileScopeError extends StageflowError {
  constructor() {
    super(
      'profile_scope_invalid',
      `The Host's browser profile scope is not a valid name (it must match ${PROFILE_NAME_RULE}); this is a Host configuration bug, report it.`,
      500,
    );
    this.name = 'ProfileScopeError';
  }
}

export class ProfileExistsError extends ConflictError {
  /** @param existing - the stored name when it differs from `name` only in case */
  constructor(name: string, existing?: string) {
    super(
      'profile_exists',
      existing === undefined || existing === name
        ? `Browser profile "${name}" already exists: use it as it is, or delete it first to start from an empty profile.`
        : `Browser profile "${name}" cannot be created: "${existing}" already exists, and profile names may not differ only in case ` +
            '(macOS would store both in one folder). Use that profile, or choose another name.',
      { profile: name },
    );
    this.name = 'ProfileExistsError';
  }
}

export class ProfileNotFoundError extends NotFoundError {
  constructor(name: string) {
    super(
      'profile_not_found',
      `There is no browser profile "${name}" on this Host: check the name (names are case-sensitive) or create the profile first.`,
      { profile: name },
    );
    this.name = 'ProfileNotFoundError';
  }
}

/** Delete refused: a run holds the profile, or runs wait for it. `details` names them (ids only). */
export class ProfileLeasedError extends ConflictError {
  constructor(name: string, lease: ProfileLease) {
    const waiting = lease.waiters.length;
    const others = waiting === 1 ? '1 more run waits for it' : `${waiting} more runs wait for it`;
    const message = lease.holder
      ? `Browser profile "${name}" is in use by run ${lease.holder.runId} (since ${lease.holder.since})` +
        `${waiting > 0 ? ` and ${others}` : ''}, so it cannot be deleted: ` +
        `wait until run ${lease.holder.runId} ends, or cancel it, then delete the profile again.`
      : `Browser profile "${name}" cannot be deleted: run ${lease.waiters[0]?.runId} is waiting for it` +
        `${waiting > 1 ? ` (${waiting} runs wait)` : ''}, and deleting it would take the saved login from under those runs. ` +
        'Let them run, or cancel them, then delete the profile again.';
    super('profile_leased', message, { profile: name, ...lease });
    this.name = 'ProfileLeasedError';
  }
}

/**
 * The profile's folder is not a plain folder right inside the scope folder (a
 * symbolic link, a file, or something that resolves elsewhere). Stageflow
 * neither uses nor deletes it: following it could hand Chrome, or `rm -r`,
 * a folder outside the profile store.
 */
export class ProfileFolderUnsafeError extends ConflictError {
  constructor(name: string) {
    super(
      'profile_folder_unsafe',
      `The folder of browser profile "${name}" is not a plain folder in the Host's profile store (it is a symbolic link, a file, ` +
        'or it resolves elsewhere), so Stageflow will neither use nor delete it. On the Host, replace it with a real folder or remove it.',
      { profile: name },
    );
    this.name = 'ProfileFolderUnsafeError';
  }
}

/** STAGEFLOW_HOME sits inside a project checkout, where a saved login could be committed. */
export class ProfileHomeInCheckoutError extends StageflowError {
  constructor() {
    super(
      'profile_home_in_checkout',
      'Browser profiles cannot be stored in this STAGEFLOW_HOME: it is inside a project checkout (a folder above it holds .git), ' +
        'where saved logins could be committed. Set STAGEFLOW_HOME to a folder outside any checkout (the default is ~/.stageflow) and restart.',
      500,
    );
    this.name = 'ProfileHomeInCheckoutError';
  }
}

/** The profile changed but its audit record could not be written; the cause is in the Host's log. */
export class ProfileAuditFailedError extends StageflowError {
  constructor(name: string, action: 'created' | 'deleted') {
    super(
      'profile_audit_failed',
      `Browser profile "${name}" was ${action}, but its audit record could not be written (the error is in the Host's log). ` +
        'Check that the Stageflow home is writable and has free space.',
      500,
      { profile: name },
    );
    this.name = 'ProfileAuditFailedError';
  }
}
