import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { ArtifactStore } from '@stageflow/artifacts';
import type { ApiConfig } from '@stageflow/config';
import { testRedisUrl, uniquePrefix } from '@stageflow/testing';
import Redis from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { testConfig } from '../../test/test-app';
import { AppModule } from '../app.module';
import { configureApp } from '../app.setup';

const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(64, 1)]);
const TOKEN = 'artifacts-int-token-0123456789';
const GATE = 'name: waits\nstages:\n  - id: approve\n    message: Go?\n';

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (batch.length) await redis.del(...batch);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * The whole api on the real engine (Redis) and a real artifacts root: an
 * artifact written through the store, as a runner writes it, is listed and
 * downloaded for a run the engine knows.
 */
describe('artifacts over the real engine and disk', () => {
  let url: string;
  let prefix: string;
  let base: string;
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  const auth = { Authorization: `Bearer ${TOKEN}` };

  beforeEach(async () => {
    url = testRedisUrl();
    prefix = uniquePrefix('sft-artifacts');
    base = mkdtempSync(join(tmpdir(), 'sf-int-artifacts-'));
    const config: ApiConfig = { ...testConfig({ token: TOKEN }), redis: { url, prefix }, home: base, artifactsRoot: join(base, 'artifacts') };
    const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot(config)] }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false });
    configureApp(app, config);
    await app.init();
    http = request(app.getHttpServer());
  });

  afterEach(async () => {
    await app.close();
    await deleteKeys(url, prefix);
    rmSync(base, { recursive: true, force: true });
  });

  it('lists and downloads an artifact of a run, and answers 404/400 without a path for what is not there', async () => {
    const run = (await http.post('/api/runs').set(auth).send({ yaml: GATE }).expect(201)).body.id as string;
    const store = new ArtifactStore({ root: join(base, 'artifacts') });
    await store.write({ runId: run, stageId: 'approve', attempt: 1 }, 'evidence.png', PNG);

    const listed = await http.get(`/api/runs/${run}/artifacts`).set(auth).expect(200);
    expect(listed.body.items).toEqual([
      {
        stage: 'approve',
        attempt: 1,
        name: 'evidence.png',
        sizeBytes: PNG.length,
        contentType: 'image/png',
        modifiedAt: expect.any(String),
        downloadPath: `/api/runs/${run}/artifacts/approve/1/evidence.png`,
      },
    ]);

    const file = await http
      .get(listed.body.items[0].downloadPath)
      .set(auth)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(file.body).toEqual(PNG);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['content-disposition']).toBe('attachment; filename="evidence.png"');

    const unknownRun = await http.get('/api/runs/no-such-run/artifacts').set(auth).expect(404);
    expect(unknownRun.body.code).toBe('run_not_found');
    const missing = await http.get(`/api/runs/${run}/artifacts/approve/1/other.png`).set(auth).expect(404);
    expect(missing.body).toMatchObject({ code: 'artifact_not_found', message: expect.any(String) });
    const traversal = await http.get(`/api/runs/${run}/artifacts/approve/1/..%2F..%2F..%2Fhome`).set(auth).expect(400);
    expect(traversal.body.code).toBe('artifact_name_invalid');
    for (const body of [listed.body, missing.body, traversal.body]) expect(JSON.stringify(body)).not.toContain(base);
  });
});
