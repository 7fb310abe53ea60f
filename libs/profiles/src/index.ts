export { LOCAL_SCOPE, PROFILE_NAME_PATTERN, assertProfileName, isProfileName } from './lib/profile-name';
export {
  PROFILE_NAME_RULE,
  ProfileAuditFailedError,
  ProfileExistsError,
  ProfileFolderUnsafeError,
  ProfileHomeInCheckoutError,
  ProfileLeasedError,
  ProfileNameError,
  ProfileNotFoundError,
  ProfileScopeError,
} from './lib/profile.errors';
export type { ProfileFs, ProfileFsEntry } from './lib/profile-fs.adapter';
export { nodeProfileFs } from './lib/profile-fs.adapter';
export { ProfileStore } from './lib/profile.store';
export type { ProfileStoreOptions } from './lib/profile.store';
export { ProfileService } from './lib/profile.service';
export type { BrowserDataOutcome, ProfileAuditTrail, ProfileLeaseReader } from './lib/profile.service';
export { PROFILE_AUDIT_TRAIL, PROFILE_LEASE_READER, PROFILE_SCOPE, ProfilesModule } from './lib/profiles.module';
export type { ProfileLeasesSource, ProfilesModuleOptions } from './lib/profiles.module';
export type { LeasedProfile, ProfileInfo, ProfileLease, ProfileLeaseHolder, ProfileLeaseWaiter } from './lib/profile.types';
