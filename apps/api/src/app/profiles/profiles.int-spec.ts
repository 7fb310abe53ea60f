import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { RedisKeys } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { testConfig } from '../../test/test-app';
import { AppModule } from '../app.module';
import { configureApp } from '../app.setup';
import { BrowserHostBrowserData } from './browser-host-browser-data.adapter';
import { FakeBrowserHostBrowserData } from './profiles.test-app';

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/** The whole api (real engine, real leases on real Redis, real disk in a temp home) against a browser host's leases. */
describe('profiles over real Redis and a real home', () => {
  let url: string;
  let prefix: string;
  let home: string;
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  let host: ProfileLeases;

  beforeEach(async () => {
    url = testRedisUrl();
    prefix = uniquePrefix('sft-profiles');
    home = mkdtempSync(join(tmpdir(), 'sf-int-home-'));
    const config: ApiConfig = { ...testConfig(), redis: { url, prefix }, home };
    // No browser-host here: its removal of the browser data is profile-browser-data.int-spec.ts's.
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] })
      .overrideProvider(BrowserHostBrowserData)
      .useValue(new FakeBrowserHostBrowserData())
      .compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
    configureApp(app, config);
    await app.init();
    http = request(app.getHttpServer());
    // The browser host's side of the lease, as a separate client on the same Redis and prefix.
    host = new ProfileLeases({ redis: url, keys: new RedisKeys(prefix) });
  });

  afterEach(async () => {
    await app.close();
    await host.close();
    await deleteKeys(url, prefix);
    rmSync(home, { recursive: true, force: true });
  });

  it('refuses to delete a leased profile, keeps its folder, and deletes it once the runs let go', async () => {
    const folder = join(home, 'browser', 'local', 'work');
    await http.post('/api/profiles').send({ name: 'work' }).expect(201);
    expect(statSync(folder).mode & 0o777).toBe(0o700);

    expect(await host.acquire('local', 'work', 'run-int-1')).toMatchObject({ status: 'granted' });
    expect(await host.acquire('local', 'work', 'run-int-2')).toMatchObject({ status: 'queued', position: 1 });

    const shown = (await http.get('/api/profiles/work').expect(200)).body;
    expect(shown.lease).toEqual({
      holder: { runId: 'run-int-1', since: expect.any(String) },
      waiters: [{ runId: 'run-int-2', since: expect.any(String) }],
    });
    expect(Date.parse(shown.lease.holder.since)).toBeGreaterThan(Date.now() - 60_000);
    expect((await http.get('/api/profiles').expect(200)).body).toEqual([
      expect.objectContaining({ name: 'work', lease: shown.lease }),
    ]);

    const refused = await http.delete('/api/profiles/work').expect(409);
    expect(refused.body).toMatchObject({ code: 'profile_leased', details: { holder: { runId: 'run-int-1' } } });
    expect(refused.body.message).toContain('run run-int-1');
    expect(existsSync(folder)).toBe(true);

    // The holder's run ends: the lease goes to the waiting run, which still blocks the delete.
    expect(await host.release('local', 'work', 'run-int-1')).toBe(true);
    expect((await http.get('/api/profiles/work').expect(200)).body.lease).toEqual({
      holder: { runId: 'run-int-2', since: expect.any(String) },
      waiters: [],
    });
    expect((await http.delete('/api/profiles/work').expect(409)).body.details.holder.runId).toBe('run-int-2');
    expect(existsSync(folder)).toBe(true);

    await host.releaseRun('run-int-2');
    await http.delete('/api/profiles/work').expect(204);
    expect(existsSync(folder)).toBe(false);
    expect((await http.get('/api/profiles').expect(200)).body).toEqual([]);

    const audit = (await http.get('/api/audit').expect(200)).body;
    expect(audit).toEqual({
      items: [
        { at: expect.any(String), type: 'profile_deleted', profile: 'work', scope: 'local', browserData: 'none' },
        { at: expect.any(String), type: 'profile_created', profile: 'work', scope: 'local' },
      ],
    });
    const file = readFileSync(join(home, 'browser', 'audit.jsonl'), 'utf8');
    expect(file).not.toContain(home);
    expect(file.trim().split('\n').map((l) => Object.keys(JSON.parse(l)).sort())).toEqual([
      ['at', 'profile', 'scope', 'type'],
      ['at', 'browserData', 'profile', 'scope', 'type'],
    ]);
  });
});
