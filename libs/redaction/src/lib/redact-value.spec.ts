import { redactValue } from '../index';

describe('redactValue', () => {
  it('replaces values under secret-looking keys at any depth', () => {
    const out = redactValue({
      request: {
        headers: { cookie: 'a=b', 'set-cookie': ['sid=1'], Authorization: 'Bearer x', accept: 'text/html' },
        body: { user: 'alice', password: 'hunter2', api_key: 'k', accessToken: 't', session: { id: 's' } },
      },
      secret: 42,
    });
    expect(out).toEqual({
      request: {
        headers: {
          cookie: '[redacted:cookie]',
          'set-cookie': '[redacted:cookie]',
          Authorization: '[redacted:authorization]',
          accept: 'text/html',
        },
        body: {
          user: 'alice',
          password: '[redacted:password]',
          api_key: '[redacted:api_key]',
          accessToken: '[redacted:token]',
          session: '[redacted:session]',
        },
      },
      secret: '[redacted:secret]',
    });
  });

  it('keeps keys that only describe a secret, and flags', () => {
    const value = { max_tokens: 4096, token_type: 'bearer', password_required: true, expires_in: 3600, token: null };
    expect(redactValue(value)).toEqual(value);
  });

  it('redacts the value of cookie objects, keeping their name and domain', () => {
    expect(redactValue([{ name: 'theme', value: 'dark', domain: '.example.com', path: '/' }])).toEqual([
      { name: 'theme', value: '[redacted:cookie]', domain: '.example.com', path: '/' },
    ]);
  });

  it('passes every string through redactText', () => {
    expect(redactValue({ line: 'Cookie: sid=abc', list: ['token=xyz123'] })).toEqual({
      line: 'Cookie: [redacted:cookie]',
      list: ['token=[redacted:token]'],
    });
  });

  it('turns anything into plain JSON without throwing', () => {
    const cyclic: Record<string, unknown> = { name: 'run' };
    cyclic['self'] = cyclic;
    const hostile = {
      get boom(): never {
        throw new Error('getter');
      },
    };
    const out = redactValue({
      cyclic,
      when: new Date('2024-05-01T00:00:00Z'),
      big: 10n,
      fn: () => 1,
      undef: undefined,
      arr: [undefined, NaN],
      map: new Map([['password', 'p']]),
      err: new Error('failed with token=abc123'),
      buf: Buffer.from('secret'),
      hostile,
    });
    expect(out).toEqual({
      cyclic: { name: 'run', self: '[circular]' },
      when: '2024-05-01T00:00:00.000Z',
      big: '10',
      arr: [null, null],
      map: { password: '[redacted:password]' },
      err: { name: 'Error', message: 'failed with token=[redacted:token]' },
      buf: '[binary]',
      hostile: '[unreadable]',
    });
  });

  it('keeps a shared (non-cyclic) object in both places', () => {
    const shared = { a: 1 };
    expect(redactValue({ x: shared, y: shared })).toEqual({ x: { a: 1 }, y: { a: 1 } });
  });
});
