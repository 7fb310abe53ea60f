import { AccessPolicy, isLoopbackHostHeader } from './access.policy';

const TOKEN = 'a-long-random-secret-0123456789';

describe('AccessPolicy with a token', () => {
  const policy = new AccessPolicy(TOKEN);

  it('lets a request with the right bearer token through, whatever its host or origin', () => {
    expect(policy.check({ authorization: `Bearer ${TOKEN}`, host: 'api.example.com', origin: 'https://elsewhere.example' })).toBeNull();
    expect(policy.check({ authorization: `bearer   ${TOKEN}` })).toBeNull();
  });

  it('refuses a missing, wrong, prefixed or truncated token with 401 unauthorized', () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, TOKEN, `Basic ${TOKEN}`, 'Bearer ']) {
      const denied = policy.check({ authorization });
      expect(denied).toMatchObject({ code: 'unauthorized', status: 401 });
    }
  });

  it('says how to send the token when none was sent', () => {
    expect(policy.check({})?.message).toMatch(/Authorization: Bearer/);
  });

  it('accepts the token from the query (WebSocket upgrades from browsers) only when it matches', () => {
    expect(policy.check({}, TOKEN)).toBeNull();
    expect(policy.check({}, 'wrong')).toMatchObject({ code: 'unauthorized' });
  });
});

describe('AccessPolicy without a token (loopback-only api)', () => {
  const policy = new AccessPolicy();

  it('lets non-browser clients on loopback through', () => {
    expect(policy.check({ host: '127.0.0.1:3000' })).toBeNull();
    expect(policy.check({ host: 'localhost:3000' })).toBeNull();
    expect(policy.check({ host: '[::1]:3000' })).toBeNull();
    expect(policy.check({})).toBeNull();
  });

  it('lets a page served by this api through (same origin)', () => {
    expect(policy.check({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' })).toBeNull();
  });

  it('refuses pages of other origins, including the "null" origin', () => {
    for (const origin of ['https://evil.example', 'http://127.0.0.1:8080', 'null', 'not a url']) {
      expect(policy.check({ host: '127.0.0.1:3000', origin })).toMatchObject({ code: 'origin_forbidden', status: 403 });
    }
  });

  it('refuses a non-loopback Host (DNS rebinding), even same-origin', () => {
    expect(policy.check({ host: 'evil.example:3000', origin: 'http://evil.example:3000' })).toMatchObject({
      code: 'host_forbidden',
      status: 403,
    });
  });
});

describe('isLoopbackHostHeader', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10:80', true],
    ['LOCALHOST:3000', true],
    ['[::1]:3000', true],
    ['128.0.0.1', false],
    ['localhost.evil.example', false],
    ['127.0.0.1.evil.example', false],
    ['', false],
    ['a b', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopbackHostHeader(host)).toBe(expected);
  });
});

describe('AccessPolicy.checkTicketUpgrade (the live-view WebSocket)', () => {
  it('asks for no token when one is configured: the ticket is the credential and the relay checks it', () => {
    expect(new AccessPolicy('a-long-enough-token-1234').checkTicketUpgrade({ host: 'stageflow.example' })).toBeNull();
  });

  it('keeps the loopback Host and same-origin rules without a token', () => {
    const policy = new AccessPolicy();
    expect(policy.checkTicketUpgrade({ host: '127.0.0.1:3000' })).toBeNull();
    expect(policy.checkTicketUpgrade({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' })).toBeNull();
    expect(policy.checkTicketUpgrade({ host: 'evil.example' })?.code).toBe('host_forbidden');
    expect(policy.checkTicketUpgrade({ host: '127.0.0.1:3000', origin: 'http://evil.example' })?.code).toBe('origin_forbidden');
  });
});
