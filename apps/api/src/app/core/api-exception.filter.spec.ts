import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { ConflictError, StageflowError } from '@stageflow/contracts';
import { toErrorReply } from './api-exception.filter';

const req = { method: 'GET', path: '/api/nowhere' };

describe('toErrorReply', () => {
  it('answers a StageflowError with its status, code, message and details', () => {
    expect(toErrorReply(new ConflictError('run_finished', 'Run r1 has ended.', { state: 'success' }), req)).toEqual({
      status: 409,
      body: { code: 'run_finished', message: 'Run r1 has ended.', details: { state: 'success' } },
      unexpected: false,
    });
  });

  it('leaves details out when there are none', () => {
    expect(toErrorReply(new StageflowError('x', 'y', 400), req).body).toEqual({ code: 'x', message: 'y' });
  });

  it('turns Nest\'s not-found (no such route) into route_not_found naming the route', () => {
    const reply = toErrorReply(new NotFoundException('Cannot GET /api/nowhere'), req);
    expect(reply.status).toBe(404);
    expect(reply.body.code).toBe('route_not_found');
    expect(reply.body.message).toContain('GET /api/nowhere');
  });

  it('gives other 4xx HttpExceptions a code by status', () => {
    expect(toErrorReply(new BadRequestException('Failed to decode param'), req).body).toEqual({
      code: 'bad_request',
      message: 'Failed to decode param',
    });
    expect(toErrorReply(new HttpException('Gone', 405), req).body.code).toBe('method_not_allowed');
  });

  it('hides everything else behind a 500 internal_error without the original message', () => {
    for (const thrown of [new Error('secret: db password is hunter2'), 'a string', undefined, new HttpException('boom', 502)]) {
      const reply = toErrorReply(thrown, req);
      expect(reply.status).toBe(500);
      expect(reply.unexpected).toBe(true);
      expect(reply.body.code).toBe('internal_error');
      expect(JSON.stringify(reply.body)).not.toMatch(/hunter2|boom/);
    }
  });

  it('treats a StageflowError with an impossible status as unexpected', () => {
    expect(toErrorReply(new StageflowError('weird', 'm', 200), req).status).toBe(500);
  });
});
