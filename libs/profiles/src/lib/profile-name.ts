import { ProfileNameError, ProfileScopeError } from './profile.errors';

/**
 * A profile name is one folder under `$STAGEFLOW_HOME/browser/<scope>/` and a
 * segment of a Redis lease key, so it must be a single, boring path segment.
 * Same rule as a pipeline's `browser.profile` and the leases lib.
 */
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The scope every profile of a local Host belongs to. Set by the Host, never by YAML or API input. */
export const LOCAL_SCOPE = 'local';

/**
 * True when `name` can name a profile: it matches {@link PROFILE_NAME_PATTERN}
 * and holds no `..` (the pattern alone allows `a..b`, which some tools read as
 * a parent reference).
 */
export function isProfileName(name: unknown): name is string {
  return typeof name === 'string' && PROFILE_NAME_PATTERN.test(name) && !name.includes('..');
}

/** Throws {@link ProfileNameError} (400 `profile_name_invalid`) unless {@link isProfileName}. */
export function assertProfileName(name: unknown): asserts name is string {
  if (!isProfileName(name)) throw new ProfileNameError(name);
}

/** Throws {@link ProfileScopeError} (500: the Host set a bad scope) unless `scope` is one safe path segment. */
export function assertScope(scope: unknown): asserts scope is string {
  if (!isProfileName(scope)) throw new ProfileScopeError();
}
