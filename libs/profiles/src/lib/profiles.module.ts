import { DynamicModule, InjectionToken, Module, ModuleMetadata } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import { assertScope, LOCAL_SCOPE } from './profile-name';
import { ProfileService, type ProfileAuditTrail, type ProfileLeaseReader } from './profile.service';
import { ProfileStore } from './profile.store';

/** The owner scope this process serves (a string), as set by the Host. */
export const PROFILE_SCOPE = Symbol('PROFILE_SCOPE');
/** The {@link ProfileLeaseReader} the service reads leases from. */
export const PROFILE_LEASE_READER = Symbol('PROFILE_LEASE_READER');
/** The {@link ProfileAuditTrail} the service appends to (the Host's `AuditLog`). */
export const PROFILE_AUDIT_TRAIL = Symbol('PROFILE_AUDIT_TRAIL');

/** Where the module finds the leases: a provider of another module, e.g. `ProfileLeases` of `LeasesModule`. */
export interface ProfileLeasesSource {
  /** Modules providing it, e.g. `[LeasesModule.forRoot(config.redis)]`. */
  imports?: ModuleMetadata['imports'];
  /** Its token, e.g. `ProfileLeases`. */
  useExisting: InjectionToken;
}

export interface ProfilesModuleOptions {
  /** The Stageflow home (`ApiConfig.home`): profiles live in `<home>/browser/<scope>/`, the audit log in `<home>/browser/audit.jsonl`. */
  home: string;
  /** The owner scope of this Host; never taken from YAML or API input. @defaultValue {@link LOCAL_SCOPE} */
  scope?: string;
  leases: ProfileLeasesSource;
}

const systemClock = { now: (): Date => new Date() };

/**
 * Provides {@link ProfileStore} (folders only; `pathFor` is for the browser
 * host), {@link ProfileService} (store + leases + audit) and the Host's
 * {@link PROFILE_SCOPE}.
 *
 * The leases come in through {@link ProfilesModuleOptions.leases} because the
 * lint rules keep data-access libs from importing each other; apps pass
 * `{ imports: [LeasesModule.forRoot(config.redis)], useExisting: ProfileLeases }`.
 */
@Module({})
export class ProfilesModule {
  static forRoot(options: ProfilesModuleOptions): DynamicModule {
    const scope = options.scope ?? LOCAL_SCOPE;
    // A bad scope is a Host bug: fail at boot, not on the first request.
    assertScope(scope);
    return {
      module: ProfilesModule,
      imports: [...(options.leases.imports ?? [])],
      providers: [
        { provide: PROFILE_SCOPE, useValue: scope },
        { provide: PROFILE_LEASE_READER, useExisting: options.leases.useExisting },
        { provide: PROFILE_AUDIT_TRAIL, useFactory: () => new AuditLog(options.home, systemClock) },
        { provide: ProfileStore, useFactory: () => new ProfileStore({ home: options.home }) },
        {
          provide: ProfileService,
          useFactory: (store: ProfileStore, leases: ProfileLeaseReader, audit: ProfileAuditTrail) =>
            new ProfileService(store, leases, audit),
          inject: [ProfileStore, PROFILE_LEASE_READER, PROFILE_AUDIT_TRAIL],
        },
      ],
      exports: [ProfileService, ProfileStore, PROFILE_SCOPE],
    };
  }
}
