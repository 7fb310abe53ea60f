import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { ProfileLeases } from '@stageflow/leases';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeEngine, fakeEngineModule } from '../../test/fake-engine';
import { CapturingLogger, FakeRedisProbe, testConfig } from '../../test/test-app';
import { ApiModule } from '../api.module';
import { configureApp } from '../app.setup';
import { REDIS_PROBE } from '../health/redis.probe';

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
  const logger = new CapturingLogger();
  const moduleRef = await Test.createTestingModule({
    imports: [ApiModule.forRoot(config, { engine: fakeEngineModule(engine) })],
  })
    .overrideProvider(REDIS_PROBE)
    .useValue(new FakeRedisProbe())
    .overrideProvider(ProfileLeases)
    .useValue(leases)
    .compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger });
  configureApp(app, config);
  await app.init();
  return {
    app,
    engine,
    leases,
    logger,
    config,
    home,
    close: async () => {
      await app.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
