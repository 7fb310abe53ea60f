import { StageflowError } from '@stageflow/contracts';

/**
 * Stable codes of {@link BrowserHostError}:
 * - `profile_in_use`: a live browser (this host, or a lock we cannot prove stale) holds the profile.
 * - `browser_already_running`: this adapter already runs a browser with that id.
 * - `browser_id_invalid`: the id is not one safe segment (it goes into a switch and a folder name).
 * - `launch_arg_rejected`: a launch arg is malformed or names a switch the adapter owns.
 * - `allow_domain_invalid`: an `allow_domains` entry is not a host name or `*.` wildcard.
 * - `browser_launch_failed`: Chromium (or its private display) did not start or never opened its debugging port.
 * - `allowlist_unenforced`: the allowlist could not be put in place, so the browser was not handed out.
 * - `launch_options_invalid`: the caller left out what this kind of host needs (a profile folder, an owner).
 * - `profile_volume_conflict`: the container host's profile volume exists but belongs to another scope/profile.
 */
export type BrowserHostErrorCode =
  | 'profile_in_use'
  | 'browser_already_running'
  | 'browser_id_invalid'
  | 'launch_arg_rejected'
  | 'allow_domain_invalid'
  | 'browser_launch_failed'
  | 'allowlist_unenforced'
  | 'launch_options_invalid'
  | 'profile_volume_conflict';

const STATUS: Record<BrowserHostErrorCode, number> = {
  profile_in_use: 409,
  browser_already_running: 409,
  browser_id_invalid: 400,
  launch_arg_rejected: 400,
  allow_domain_invalid: 400,
  browser_launch_failed: 502,
  allowlist_unenforced: 502,
  launch_options_invalid: 400,
  profile_volume_conflict: 409,
};

/** A browser-host failure. Messages never contain a profile path. */
export class BrowserHostError extends StageflowError {
  declare readonly code: BrowserHostErrorCode;

  constructor(code: BrowserHostErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, STATUS[code], details);
    this.name = 'BrowserHostError';
  }
}
