import { BadRequestException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { ConflictError, ContractViolationError } from '@stageflow/contracts';
import { BrowserSiteBlockedError } from '@stageflow/host-config';
import { toErrorReply } from './http-error.filter';

describe('toErrorReply', () => {
  it('maps a contract violation to 400 with its problems', () => {
    const reply = toErrorReply(new ContractViolationError('open stage session request', ['attempt must be a positive integer']));
    expect(reply).toMatchObject({ status: 400, body: { code: 'contract_violation', details: { problems: ['attempt must be a positive integer'] } } });
  });

  it('maps a blocked site to 422 naming the field and site', () => {
    const reply = toErrorReply(new BrowserSiteBlockedError([{ field: 'browser.login_url', host: 'x.example.com', site: 'example.com' }], 'login'));
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe('browser_site_blocked');
  });

  it('keeps the code of a StageflowError', () => {
    expect(toErrorReply(new ConflictError('lease_not_held', 'stale'))).toMatchObject({ status: 409, body: { code: 'lease_not_held' } });
  });

  it('passes a {code, message} HttpException body through (the health check)', () => {
    const reply = toErrorReply(new ServiceUnavailableException({ code: 'redis_unavailable', message: 'no Redis' }));
    expect(reply).toEqual({ status: 503, body: { code: 'redis_unavailable', message: 'no Redis' }, unexpected: false });
  });

  it('gives Nest\'s own 4xx a code', () => {
    expect(toErrorReply(new NotFoundException()).body.code).toBe('route_not_found');
    expect(toErrorReply(new BadRequestException('bad json')).body.code).toBe('bad_request');
  });

  it('hides anything unexpected behind internal_error', () => {
    const reply = toErrorReply(new Error('ENOENT /home/me/.stageflow/browser/local/work'));
    expect(reply).toMatchObject({ status: 500, unexpected: true, body: { code: 'internal_error' } });
    expect(reply.body.message).not.toContain('.stageflow');
  });
});
