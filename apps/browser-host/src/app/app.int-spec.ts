import { INestApplication } from '@nestjs/common';
import { loadServiceConfig } from '@stageflow/config';
import { testRedisUrl } from '@stageflow/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { AppModule } from './app.module';

/** A port nothing listens on: bind one, note it, close it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Its own home, host id and key prefix: the startup sweep must never touch
// browsers, folders or keys of anything else on this machine.
const home = mkdtempSync(join(tmpdir(), 'sf-bh-health-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function boot(redisUrl: string): Promise<INestApplication> {
  const config = loadServiceConfig('browser-host', {
    STAGEFLOW_REDIS_URL: redisUrl,
    STAGEFLOW_REDIS_PREFIX: `sft-bh-health-${process.pid}:`,
    STAGEFLOW_LOG_LEVEL: 'fatal',
    STAGEFLOW_HOME: home,
    STAGEFLOW_HOST_ID: `health-test-${process.pid}`,
    STAGEFLOW_BROWSER_TMP: join(home, 'tmp'),
    STAGEFLOW_BROWSER_RUNTIME_DIR: join(home, 'run'),
  });
  const { NestFactory } = await import('@nestjs/core');
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: false });
  app.enableShutdownHooks();
  await app.init();
  return app;
}

describe('browser-host against real Redis', () => {
  it('is healthy when Redis answers', async () => {
    const app = await boot(testRedisUrl());
    try {
      const res = await request(app.getHttpServer()).get('/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok', service: 'browser-host' });
    } finally {
      await app.close();
    }
  });

  it('boots anyway and reports 503 while Redis is unreachable', async () => {
    const port = await closedPort();
    const app = await boot(`redis://127.0.0.1:${port}`);
    try {
      const res = await request(app.getHttpServer()).get('/health');
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('redis_unavailable');
      expect(res.body.message).toContain(`127.0.0.1:${port}`);
    } finally {
      await app.close();
    }
  });
});
