import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { HealthController } from './health.controller';
import { HEALTH_OPTIONS } from './health.options';
import { RedisHealthPort } from './redis-health.adapter';

class FakeRedis extends RedisHealthPort {
  up = true;
  async ping(): Promise<boolean> {
    return this.up;
  }
  target(): string {
    return 'redis.test:6379';
  }
}

describe('GET /health', () => {
  let app: INestApplication;
  const redis = new FakeRedis();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [HealthController],
      providers: [
        { provide: RedisHealthPort, useValue: redis },
        { provide: HEALTH_OPTIONS, useValue: { service: 'live-view-relay', redisUrl: 'redis://redis.test:6379' } },
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app.close());

  it('answers 200 with the service name when Redis answers PING', async () => {
    redis.up = true;
    const res = await request(app.getHttpServer()).get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', service: 'live-view-relay' });
  });

  it('answers 503 with a code and a message naming Redis when it does not', async () => {
    redis.up = false;
    const res = await request(app.getHttpServer()).get('/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'redis_unavailable', details: { service: 'live-view-relay' } });
    expect(res.body.message).toContain('redis.test:6379');
    expect(res.body.message).toContain('STAGEFLOW_REDIS_URL');
  });
});
