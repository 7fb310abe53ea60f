import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import type { LoginCheckRequest, LoginCheckResult, ProfileBrowserDataOutcome } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeEngine, fakeEngineModule } from '../../test/fake-engine';
import { CapturingLogger, FakeRedisProbe, testConfig } from '../../test/test-app';
import { ApiModule } from '../api.module';
import { configureApp } from '../app.setup';
import { REDIS_PROBE } from '../health/redis.probe';
import { BrowserHostBrowserData } from './browser-host-browser-data.adapter';
import { BrowserHostChecks } from './browser-host-checks.adapter';
import { ProfileCheckRecords, type LastProfileCheck, type ProfileCheckRecord } from './profile-check-records.repository';
import { PROFILES_CLOCK } from './profiles-api.service';

/** Test support: the api's profile check records in memory. */
export class MemoryProfileCheckRecords extends ProfileCheckRecords {
  readonly records = new Map<string, ProfileCheckRecord>();

  async read(scope: string, names: readonly string[]): Promise<ProfileCheckRecord[]> {
    return names.map((name) => structuredClone(this.records.get(`${scope}/${name}`) ?? {}));
  }
  async saveCheck(scope: string, name: string, check: LoginCheckRequest): Promise<void> {
    this.records.set(`${scope}/${name}`, { ...this.records.get(`${scope}/${name}`), check });
  }
  async saveLast(scope: string, name: string, last: LastProfileCheck): Promise<void> {
    this.records.set(`${scope}/${name}`, { ...this.records.get(`${scope}/${name}`), last });
  }
  async remove(scope: string, name: string): Promise<void> {
    this.records.delete(`${scope}/${name}`);
  }
}

/** Test support: browser-host's profile check, answering what a test sets (or throwing it). */
export class FakeBrowserHostChecks extends BrowserHostChecks {
  readonly calls: Array<{ profile: string; criteria: LoginCheckRequest }> = [];
  answer: LoginCheckResult | Error = { logged_in: true, url: 'https://app.test/account' };

  async check(profile: string, criteria: LoginCheckRequest): Promise<LoginCheckResult> {
    this.calls.push({ profile, criteria });
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

/** Test support: browser-host's removal of a profile's browser data, answering what a test sets (or throwing it). */
export class FakeBrowserHostBrowserData extends BrowserHostBrowserData {
  readonly calls: string[] = [];
  answer: ProfileBrowserDataOutcome | Error = 'none';

  async remove(profile: string): Promise<ProfileBrowserDataOutcome> {
    this.calls.push(profile);
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

/**
 * Test support only (imported by specs, never by main.ts): the lease states a
 * test sets, shaped as `ProfileLeases.describe` returns them, fencing token
 * and ticket included, so tests can check the api drops them.
 */
export class FakeProfileLeases {
  private readonly states = new Map<
    string,
    { holder?: { runId: string; token: number; since: string }; waiters: { runId: string; since: string; ticket: number }[] }
  >();
  failWith?: Error;

  hold(profile: string, runId: string, since = '2030-01-01T00:00:00.000Z'): this {
    this.stateOf(profile).holder = { runId, token: 7, since };
    return this;
  }

  queue(profile: string, runId: string, since = '2030-01-01T00:05:00.000Z'): this {
    const state = this.stateOf(profile);
    state.waiters.push({ runId, since, ticket: 8 + state.waiters.length });
    return this;
  }

  free(profile: string): this {
    this.states.delete(profile);
    return this;
  }

  async describe(scope: string, profile: string): Promise<unknown> {
    if (this.failWith) throw this.failWith;
    return { scope, profile, ...structuredClone(this.states.get(profile) ?? { waiters: [] }) };
  }

  private stateOf(profile: string) {
    let state = this.states.get(profile);
    if (!state) this.states.set(profile, (state = { waiters: [] }));
    return state;
  }
}

export interface ProfilesTestApp {
  app: NestExpressApplication;
  engine: FakeEngine;
  leases: FakeProfileLeases;
  checkRecords: MemoryProfileCheckRecords;
  browserHost: FakeBrowserHostChecks;
  browserData: FakeBrowserHostBrowserData;
  logger: CapturingLogger;
  config: ApiConfig;
  /** A fresh temp folder: STAGEFLOW_HOME of this app. */
  home: string;
  /** Closes the app and removes the home. */
  close(): Promise<void>;
}

/** The api as main.ts configures it, over a fake engine and fake leases, with a temp STAGEFLOW_HOME on the real disk. */
export async function createProfilesTestApp(options: { token?: string } = {}): Promise<ProfilesTestApp> {
  const home = mkdtempSync(join(tmpdir(), 'sf-api-home-'));
  const config: ApiConfig = { ...testConfig({ token: options.token }), home };
  const engine = new FakeEngine();
  const leases = new FakeProfileLeases();
  const checkRecords = new MemoryProfileCheckRecords();
  const browserHost = new FakeBrowserHostChecks();
  const browserData = new FakeBrowserHostBrowserData();
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [ApiModule.forRoot(config, { engine: fakeEngineModule(engine) })],
  })
    .overrideProvider(REDIS_PROBE)
    .useValue(new FakeRedisProbe())
    .overrideProvider(ProfileLeases)
    .useValue(leases)
    .overrideProvider(ProfileCheckRecords)
    .useValue(checkRecords)
    .overrideProvider(BrowserHostChecks)
    .useValue(browserHost)
    .overrideProvider(BrowserHostBrowserData)
    .useValue(browserData)
    .overrideProvider(PROFILES_CLOCK)
    .useValue({ now: () => new Date('2030-01-02T03:04:05.000Z') })
    .compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger });
  configureApp(app, config);
  await app.init();
  return {
    app,
    engine,
    leases,
    checkRecords,
    browserHost,
    browserData,
    logger,
    config,
    home,
    close: async () => {
      await app.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
