import { DynamicModule, Module } from '@nestjs/common';
import { AuditLog } from '@stageflow/audit';
import type { ServiceConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import { loadHostConfig } from '@stageflow/host-config';
import { LeasesModule, ProfileLeases } from '@stageflow/leases';
import { LOCAL_SCOPE, ProfileService, ProfileStore } from '@stageflow/profiles';
import { SERVICE_CONFIG } from '../service-config';
import { CdpPublisher } from './cdp-publisher';
import { BrowserConnections } from './browser-connections';
import { BrowserHostRedis } from './browser-host.redis';
import { BROWSER_SETTINGS, HOST_CONFIG, OWNER_SCOPE } from './browser-host.tokens';
import { BrowserProcesses, LocalBrowserProcesses } from './browser-processes.adapter';
import { ContainerBrowserProcesses } from './container-browser-processes.adapter';
import { RoutedBrowserProcesses } from './routed-browser-processes';
import { BrowserRegistry } from './browser-registry.repository';
import { BrowserTabs, CdpBrowserTabs } from './browser-tabs.adapter';
import { CapabilitiesController } from './capabilities.controller';
import { HostReadiness } from './host-readiness';
import { ProfileAccess, StoreProfileAccess } from './profile-access.adapter';
import { RunBrowsers } from './run-browsers.service';
import { EngineRunStates, RunStates } from './run-states.adapter';

const systemClock = { now: (): Date => new Date() };

/**
 * The browsers of browser-host: the local Chromium adapter and the container host, the Redis registry, the
 * run's shared and throw-away browsers, profiles and their audit, leases. Reads
 * `$STAGEFLOW_HOME/config.yaml` once, here: an invalid file stops the boot.
 */
@Module({})
export class BrowsersModule {
  static forRoot(config: ServiceConfig): DynamicModule {
    const loaded = loadHostConfig(config.home);
    // STAGEFLOW_BROWSER_HOST picks the adapter at start without editing config.yaml.
    const override = config.browser.hostKindOverride;
    const hostConfig = override ? { ...loaded, browser: { ...loaded.browser, host: override } } : loaded;
    const shared = [
      BrowserHostRedis,
      BrowserRegistry,
      HostReadiness,
      RunBrowsers,
      BrowserProcesses,
      BrowserTabs,
      ProfileAccess,
      ProfileStore,
      AuditLog,
      BROWSER_SETTINGS,
      HOST_CONFIG,
      OWNER_SCOPE,
      RedisKeys,
      RunStates,
      CdpPublisher,
    ];
    return {
      module: BrowsersModule,
      // Global: sessions and sweep use its providers without importing it again.
      global: true,
      imports: [LeasesModule.forRoot(config.redis)],
      controllers: [CapabilitiesController],
      providers: [
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: BROWSER_SETTINGS, useValue: config.browser },
        { provide: HOST_CONFIG, useValue: hostConfig },
        // The Host sets the scope; YAML and requests never do. Local today.
        { provide: OWNER_SCOPE, useValue: LOCAL_SCOPE },
        { provide: RedisKeys, useValue: new RedisKeys(config.redis.prefix) },
        BrowserHostRedis,
        BrowserRegistry,
        HostReadiness,
        RunBrowsers,
        BrowserConnections,
        CdpPublisher,
        // Shared browsers on the host Host config names per owner scope (browser.host,
        // browser.owner_hosts); throw-away browsers always on the local one.
        LocalBrowserProcesses,
        ContainerBrowserProcesses,
        { provide: BrowserProcesses, useClass: RoutedBrowserProcesses },
        { provide: BrowserTabs, useClass: CdpBrowserTabs },
        { provide: ProfileStore, useFactory: () => new ProfileStore({ home: config.home }) },
        { provide: AuditLog, useFactory: () => new AuditLog(config.home, systemClock) },
        {
          provide: ProfileService,
          useFactory: (store: ProfileStore, leases: ProfileLeases, audit: AuditLog) => new ProfileService(store, leases, audit),
          inject: [ProfileStore, ProfileLeases, AuditLog],
        },
        { provide: ProfileAccess, useClass: StoreProfileAccess },
        { provide: RunStates, useClass: EngineRunStates },
      ],
      exports: [...shared, ContainerBrowserProcesses, LeasesModule],
    };
  }
}
