import fc from 'fast-check';
import { isHostAllowed, judgeUrl, parseAllowDomains, reportableUrl } from './allowlist';

describe('allow_domains', () => {
  const allow = parseAllowDomains(['allowed.test', '*.ok.test', 'Example.COM.', '127.0.0.1']);

  it('allows exact hosts, case- and trailing-dot-insensitive', () => {
    expect(isHostAllowed('allowed.test', allow)).toBe(true);
    expect(isHostAllowed('EXAMPLE.com.', allow)).toBe(true);
    expect(isHostAllowed('sub.allowed.test', allow)).toBe(false);
    expect(isHostAllowed('127.0.0.1', allow)).toBe(true);
  });

  it('lets a wildcard allow subdomains, not the bare domain nor look-alikes', () => {
    expect(isHostAllowed('a.ok.test', allow)).toBe(true);
    expect(isHostAllowed('a.b.ok.test', allow)).toBe(true);
    expect(isHostAllowed('ok.test', allow)).toBe(false);
    expect(isHostAllowed('notok.test', allow)).toBe(false);
    expect(isHostAllowed('ok.test.evil.com', allow)).toBe(false);
  });

  it('never allows a host that neither equals nor ends with an entry', () => {
    fc.assert(
      fc.property(fc.domain(), (host) => {
        const h = host.toLowerCase();
        const expected = h === 'allowed.test' || h === 'example.com' || h.endsWith('.ok.test');
        expect(isHostAllowed(h, allow)).toBe(expected);
      }),
    );
  });

  it.each([['https://allowed.test/x'], ['*'], ['*.'], ['a.*.b'], ['allowed.test:8080'], [''], ['-bad.test']])(
    'refuses the entry %j',
    (entry) => {
      expect(() => parseAllowDomains([entry])).toThrow(expect.objectContaining({ code: 'allow_domain_invalid' }));
    },
  );

  it('checks http(s) and ws(s) by host, ignoring ports', () => {
    expect(judgeUrl('http://allowed.test:8123/a?b', allow)).toEqual({ allowed: true, checked: true, host: 'allowed.test' });
    expect(judgeUrl('wss://x.ok.test/socket', allow)).toMatchObject({ allowed: true });
    expect(judgeUrl('https://blocked.test/', allow)).toEqual({ allowed: false, checked: true, host: 'blocked.test' });
    expect(judgeUrl('ws://blocked.test:1/', allow)).toMatchObject({ allowed: false });
  });

  it('lets data:, blob: and about: through unchecked and refuses other schemes', () => {
    for (const url of ['data:text/html,hi', 'blob:http://allowed.test/uuid', 'about:blank']) {
      expect(judgeUrl(url, allow)).toEqual({ allowed: true, checked: false });
    }
    expect(judgeUrl('file:///etc/passwd', allow)).toEqual({ allowed: false, checked: true, host: 'file:' });
    expect(judgeUrl('ftp://allowed.test/x', allow)).toMatchObject({ allowed: false });
  });

  it('reports URLs without credentials, query or fragment', () => {
    expect(reportableUrl('https://u:p@blocked.test:8443/path?token=s3cret#frag')).toBe('https://blocked.test:8443/path');
    expect(reportableUrl('file:///etc/passwd')).toBe('file:');
  });
});
