/**
 * What removing a profile's browser data did, as browser-host answers it:
 * - `volume_removed`: the container host's Docker volume of the profile was removed;
 * - `none`: there was nothing to remove (no volume, or it is already gone).
 */
export type ProfileBrowserDataOutcome = 'volume_removed' | 'none';

/** 200 body of {@link profileBrowserDataRoute}. */
export interface ProfileBrowserDataResult {
  browserData: ProfileBrowserDataOutcome;
}

/**
 * DELETE: remove what browser-host keeps of a profile outside the profile store
 * (the container host's volume `sf-profile-<scope>-<profile>`), before the api
 * deletes the profile. 200 {@link ProfileBrowserDataResult}, idempotent; 409
 * `profile_leased` or `profile_in_use` while a run holds the profile or a browser
 * container uses its volume.
 */
export function profileBrowserDataRoute(profile: string): string {
  return `/internal/profiles/${encodeURIComponent(profile)}/browser-data`;
}

/** Whether a value is a {@link ProfileBrowserDataResult} (the api reads browser-host's answer with it). */
export function isProfileBrowserDataResult(value: unknown): value is ProfileBrowserDataResult {
  const v = value as Partial<ProfileBrowserDataResult> | undefined;
  return typeof v === 'object' && v !== null && (v.browserData === 'volume_removed' || v.browserData === 'none');
}
