import { StageflowError } from '@stageflow/contracts';

/**
 * Scope and profile names become one folder under `$STAGEFLOW_HOME/browser/`
 * and a segment of a Redis key, so they are a single safe path segment: no
 * slash, no colon, not `.` or `..`.
 */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Same shape as run ids everywhere else (see contracts' job payloads). */
const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : typeof value;
}

/** Throws `invalid_scope` / `invalid_profile_name` (400) unless both are one safe path segment. */
export function assertProfileRef(scope: unknown, profile: unknown): void {
  if (typeof scope !== 'string' || !NAME.test(scope)) {
    throw new StageflowError(
      'invalid_scope',
      `Scope ${shown(scope)} is not valid: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
    );
  }
  if (typeof profile !== 'string' || !NAME.test(profile)) {
    throw new StageflowError(
      'invalid_profile_name',
      `Browser profile name ${shown(profile)} is not valid: use 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
    );
  }
}

/** Throws `invalid_run_id` (400) unless `runId` looks like a run id. */
export function assertRunId(runId: unknown): void {
  if (typeof runId !== 'string' || !RUN_ID.test(runId)) {
    throw new StageflowError('invalid_run_id', `Run id ${shown(runId)} is not valid: use 1-128 letters, digits, "_" or "-".`);
  }
}

/** Throws `invalid_lease_token` (400) unless `token` is a positive safe integer. */
export function assertToken(token: unknown): void {
  if (typeof token !== 'number' || !Number.isSafeInteger(token) || token < 1) {
    throw new StageflowError('invalid_lease_token', `Lease token ${String(token)} is not valid: it is a positive integer from a grant.`);
  }
}
