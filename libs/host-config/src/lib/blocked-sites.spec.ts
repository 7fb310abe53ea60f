import {
  BrowserSiteBlockedError,
  checkStageAgainstBlockedSites,
  HostConfig,
  isSiteBlocked,
  parseHostConfig,
} from '../index';

const config: HostConfig = parseHostConfig(
  'browser:\n  blocked_sites: [example.com, mail.google.com, 10.0.0.1]\n',
  'x',
);

describe('isSiteBlocked', () => {
  it.each([
    ['example.com', 'example.com'],
    ['https://example.com/login?next=/', 'example.com'],
    ['https://a.b.example.com', 'example.com'],
    ['HTTPS://WWW.EXAMPLE.COM/', 'example.com'],
    ['example.com:8443', 'example.com'],
    ['http://example.com:8080/x', 'example.com'],
    ['https://example.com./', 'example.com'],
    ['www.example.com.', 'example.com'],
    ['http://10.0.0.1:3000/', '10.0.0.1'],
    ['https://mail.google.com/mail/u/0', 'mail.google.com'],
  ])('blocks %s (by %s)', (input, site) => {
    expect(isSiteBlocked(config, input)).toBe(site);
  });

  it.each([
    'notexample.com',
    'https://example.com.evil.test/',
    'https://example.org',
    'https://google.com',
    'https://docs.google.com',
    'about:blank',
    'data:text/html,example.com',
    '',
    'http://',
  ])('lets %s through', (input) => {
    expect(isSiteBlocked(config, input)).toBeUndefined();
  });

  it('blocks nothing with the default config', () => {
    expect(isSiteBlocked(parseHostConfig('', 'x'), 'https://example.com')).toBeUndefined();
  });
});

describe('checkStageAgainstBlockedSites', () => {
  function conflictOf(stage: Parameters<typeof checkStageAgainstBlockedSites>[1]): BrowserSiteBlockedError {
    try {
      checkStageAgainstBlockedSites(config, stage);
    } catch (e) {
      if (e instanceof BrowserSiteBlockedError) return e;
      throw e;
    }
    throw new Error('expected BrowserSiteBlockedError');
  }

  it('passes a stage that stays away from blocked sites', () => {
    expect(() =>
      checkStageAgainstBlockedSites(config, {
        allowDomains: ['example.org', '*.github.com'],
        checkUrl: 'https://github.com/settings',
        loginUrl: 'https://github.com/login',
      }),
    ).not.toThrow();
    expect(() => checkStageAgainstBlockedSites(config, {})).not.toThrow();
  });

  it('names the field and the blocked site, with status 422', () => {
    const e = conflictOf({ stageId: 'work', allowDomains: ['example.org', 'app.example.com'] });
    expect(e.code).toBe('browser_site_blocked');
    expect(e.status).toBe(422);
    expect(e.message).toContain(
      'Stage "work" cannot start: browser.allow_domains[1] (app.example.com) touches the blocked site example.com',
    );
    expect(e.details).toEqual({
      stageId: 'work',
      conflicts: [{ field: 'browser.allow_domains[1]', host: 'app.example.com', site: 'example.com' }],
    });
  });

  it('checks the check URL and login URL, and never echoes their path or query', () => {
    const e = conflictOf({
      checkUrl: 'https://example.com/me?token=s3cret',
      loginUrl: 'https://www.example.com/login',
    });
    expect(e.details.conflicts.map((c) => c.field)).toEqual(['browser.check.url', 'browser.login_url']);
    expect(e.message).not.toContain('s3cret');
    expect(e.message).toContain('(and 1 more)');
  });

  it('refuses a wildcard allow domain that covers a blocked site', () => {
    const e = conflictOf({ allowDomains: ['*.google.com'] });
    expect(e.details.conflicts).toEqual([
      { field: 'browser.allow_domains[0]', host: '*.google.com', site: 'mail.google.com' },
    ]);
    expect(conflictOf({ allowDomains: ['*.example.com'] }).details.conflicts[0].site).toBe('example.com');
  });

  it('does not treat a plain allow domain as covering its subdomains', () => {
    expect(() => checkStageAgainstBlockedSites(config, { allowDomains: ['google.com'] })).not.toThrow();
  });
});
