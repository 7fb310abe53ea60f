/**
 * What the profile store tells about a profile. Deliberately no path: this is
 * what API clients, events and run state may see.
 */
export interface ProfileInfo {
  name: string;
  /** Owner scope, e.g. `local`. */
  scope: string;
  /** When the folder was created (ISO 8601; its modification time where the file system keeps no birth time). */
  createdAt: string;
  /** Bytes of the files in the folder (links not followed). Only on single-profile reads: walking every profile is slow. */
  sizeBytes?: number;
}

/** A run holding a profile's lease. The fencing token stays inside the Host. */
export interface ProfileLeaseHolder {
  runId: string;
  /** When the lease was granted (ISO 8601). */
  since: string;
}

/** A run waiting for a profile's lease. */
export interface ProfileLeaseWaiter {
  runId: string;
  /** When it started waiting (ISO 8601). */
  since: string;
}

/** Who holds a profile and who waits for it, first in line first. */
export interface ProfileLease {
  holder?: ProfileLeaseHolder;
  waiters: ProfileLeaseWaiter[];
}

/** A profile with its lease, as `ProfileService` lists and reads it. */
export interface LeasedProfile extends ProfileInfo {
  lease: ProfileLease;
}
