export { ProfileLeases } from './lib/profile-leases.service';
export type { GrantListener, ProfileLeasesOptions, RedisConnector } from './lib/profile-leases.service';
export { LeasesModule } from './lib/leases.module';
export type { LeasesModuleOptions } from './lib/leases.module';
export { waitingReason } from './lib/lease-rules';
export { checkHolderExpiry, isCheckHolder } from './lib/check-holder';
export type {
  AcquireOutcome,
  CheckHoldOutcome,
  GrantVia,
  LeaseGrant,
  LeaseHolder,
  LeaseState,
  LeaseWaiter,
  ReclaimOutcome,
  RunLeaseRelease,
  RunLiveness,
} from './lib/lease.types';
