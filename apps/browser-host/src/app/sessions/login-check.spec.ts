import { judgeLogin, urlMatches } from './login-check';

describe('urlMatches (browser.check.logged_out_url)', () => {
  it.each([
    ['/login', 'https://a.test/login?next=/x', true],
    ['/login', 'https://a.test/account', false],
    ['*/login*', 'https://a.test/login?next=/x', true],
    ['*/login*', 'https://a.test/account', false],
    ['https://a.test/*', 'https://a.test/anything', true],
    ['https://a.test/*', 'https://b.test/a.test/x', false],
    ['*.test/sign?in*', 'https://a.test/sign?in=1', true],
    ['*.test/sign?in*', 'https://a.test/signxin', false],
    ['*(x)*', 'https://a.test/(x)', true],
  ])('%s against %s: %s', (pattern, url, expected) => {
    expect(urlMatches(pattern, url)).toBe(expected);
  });
});

describe('judgeLogin', () => {
  const url = 'https://a.test/account';
  it('is logged in when every criterion the check names holds', () => {
    expect(judgeLogin({ url, loggedOutUrl: '*/login*', selector: '#me', cookie: 'sid' }, { finalUrl: url, selectorPresent: true, cookiePresent: true })).toBe(true);
    expect(judgeLogin({ url, cookie: 'sid' }, { finalUrl: 'https://a.test/login', cookiePresent: true })).toBe(true);
  });

  it.each([
    ['redirected to the login page', { finalUrl: 'https://a.test/login?next=/account', selectorPresent: true, cookiePresent: true }],
    ['no selector', { finalUrl: url, selectorPresent: false, cookiePresent: true }],
    ['no cookie', { finalUrl: url, selectorPresent: true, cookiePresent: false }],
  ])('is logged out when %s', (_why, facts) => {
    expect(judgeLogin({ url, loggedOutUrl: '*/login*', selector: '#me', cookie: 'sid' }, facts)).toBe(false);
  });
});
