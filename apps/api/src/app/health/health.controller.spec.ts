import request from 'supertest';
import { createTestApp, type TestApp } from '../../test/test-app';

describe('GET /api/health', () => {
  let t: TestApp;

  afterEach(() => t.app.close());

  it('is 200 {status:"ok"} while Redis answers, and 503 redis_unavailable when it does not', async () => {
    t = await createTestApp();
    const http = request(t.app.getHttpServer());
    await http.get('/api/health').expect(200, { status: 'ok' });
    t.redis.up = false;
    const res = await http.get('/api/health').expect(503);
    expect(res.body.code).toBe('redis_unavailable');
    expect(res.body.message).toContain('STAGEFLOW_REDIS_URL');
  });

  it('needs no token even when one is configured', async () => {
    t = await createTestApp({ token: 'health-token-0123456789' });
    await request(t.app.getHttpServer()).get('/api/health').expect(200);
  });
});
