import { INestApplication } from '@nestjs/common';
import { loadRelayConfig } from '@stageflow/config';
import { testRedisUrl } from '@stageflow/testing';
import { createServer } from 'node:net';
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

async function boot(redisUrl: string): Promise<INestApplication> {
  // A home without config.yaml: the Host config's defaults.
  const config = loadRelayConfig({ STAGEFLOW_REDIS_URL: redisUrl, STAGEFLOW_LOG_LEVEL: 'fatal', STAGEFLOW_HOME: '/nonexistent-stageflow-home' });
  const { NestFactory } = await import('@nestjs/core');
  const app = await NestFactory.create(AppModule.forRoot(config), { logger: false });
  app.enableShutdownHooks();
  await app.init();
  return app;
}

describe('live-view-relay against real Redis', () => {
  it('is healthy when Redis answers', async () => {
    const app = await boot(testRedisUrl());
    try {
      const res = await request(app.getHttpServer()).get('/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok', service: 'live-view-relay' });
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
