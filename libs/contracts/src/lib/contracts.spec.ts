import { ContractViolationError } from './errors';
import { BROWSER_SESSION_ROUTES, parseOpenStageSessionRequest, parseStageActivityReport } from './browser-sessions';
import { RedisKeys } from './keys';
import { loginCheckRoute, parseLoginCheckRequest } from './login-check';
import { parseStageJobPayload, stageJobId } from './queues';
import { artifactNameProblem } from './artifacts';

describe('parseStageJobPayload', () => {
  it('accepts a well-formed payload', () => {
    expect(parseStageJobPayload({ runId: 'r1', stageId: 'greet', attempt: 2 })).toEqual({
      runId: 'r1',
      stageId: 'greet',
      attempt: 2,
    });
  });

  it.each([
    [null, 'expected an object'],
    [[], 'expected an object'],
    [{ runId: 'r1', stageId: 's', attempt: 0 }, 'attempt must be a positive integer'],
    [{ runId: 'r 1', stageId: 's', attempt: 1 }, 'runId must be an id string'],
    [{ runId: 'r1', stageId: '../s', attempt: 1 }, 'stageId must be an id string'],
    [{ runId: 'r1', stageId: 's', attempt: 1, extra: true }, 'unknown field "extra"'],
    [{ runId: 'r1', stageId: 's', attempt: 1, wake: 0 }, 'wake must be a positive integer when present'],
    [{ runId: 'r1', stageId: 's', attempt: 1, wake: '1' }, 'wake must be a positive integer when present'],
  ])('refuses %j: %s', (raw, problem) => {
    expect(() => parseStageJobPayload(raw)).toThrow(ContractViolationError);
    expect(() => parseStageJobPayload(raw)).toThrow(problem);
  });

  it('gives one job id per attempt', () => {
    expect(stageJobId({ runId: 'r1', stageId: 's', attempt: 1 })).not.toBe(
      stageJobId({ runId: 'r1', stageId: 's', attempt: 2 }),
    );
  });

  it('keeps a lease wake in the payload and gives each wake its own job id', () => {
    expect(parseStageJobPayload({ runId: 'r1', stageId: 's', attempt: 1, wake: 2 })).toEqual({
      runId: 'r1',
      stageId: 's',
      attempt: 1,
      wake: 2,
    });
    const ids = [undefined, 1, 2].map((wake) => stageJobId({ runId: 'r1', stageId: 's', attempt: 1, ...(wake ? { wake } : {}) }));
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe('r1.s.1');
  });
});

describe('parseOpenStageSessionRequest', () => {
  const base = { runId: 'r1', stageId: 'work', attempt: 1, headed: true, allowDomains: [] };

  it('accepts a throw-away request and a profile request with its fencing token', () => {
    expect(parseOpenStageSessionRequest(base)).toEqual(base);
    expect(parseOpenStageSessionRequest({ ...base, profile: 'work', leaseToken: 7 }).leaseToken).toBe(7);
  });

  it.each([
    [{ ...base, profile: '../etc' }, 'profile must be a profile name'],
    [{ ...base, profile: 'work' }, 'leaseToken must be the positive integer fencing token'],
    [{ ...base, leaseToken: 3 }, 'leaseToken is only valid with a profile'],
    [{ ...base, checkUrl: 'file:///etc/passwd' }, 'checkUrl must be an http(s) URL'],
    [{ ...base, profilePath: '/root' }, 'unknown field "profilePath"'],
  ])('refuses %j', (raw, problem) => {
    expect(() => parseOpenStageSessionRequest(raw)).toThrow(problem);
  });
});

describe('parseStageActivityReport', () => {
  it('accepts hosts, an empty list, and a reason the check is incomplete', () => {
    const report = { navigationHosts: ['example.com', 'localhost', '127.0.0.1', '[::1]', 'xn--bcher-kva.test'] };
    expect(parseStageActivityReport(report)).toEqual(report);
    expect(parseStageActivityReport({ navigationHosts: [], unverified: 'activity_unreadable' })).toEqual({
      navigationHosts: [],
      unverified: 'activity_unreadable',
    });
  });

  it.each([
    [[], 'expected an object'],
    [{}, 'navigationHosts must be a list of host names'],
    [{ navigationHosts: ['https://a.test/x?token=1'] }, 'navigationHosts[0] must be a lowercased host name'],
    [{ navigationHosts: ['ok.test', 'Upper.test'] }, 'navigationHosts[1] must be a lowercased host name'],
    [{ navigationHosts: ['a.test:8080'] }, 'navigationHosts[0] must be'],
    [{ navigationHosts: ['a.test', 'a.test'] }, 'each host once'],
    [{ navigationHosts: Array.from({ length: 1001 }, (_, i) => `h${i}.test`) }, 'at most 1000'],
    [{ navigationHosts: [], unverified: 'because' }, 'unverified must be one of activity_unreadable'],
    [{ navigationHosts: [], urls: [] }, 'unknown field "urls"'],
  ])('refuses %j', (raw, problem) => {
    expect(() => parseStageActivityReport(raw)).toThrow(problem);
  });

  it('never echoes a refused host, which may carry what the stage typed', () => {
    expect(() => parseStageActivityReport({ navigationHosts: ['secret-token-value/'] })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret-token-value') }),
    );
  });

  it('escapes the session id in its route', () => {
    expect(BROWSER_SESSION_ROUTES.activity('sf-r1-work-1')).toBe('/internal/sessions/sf-r1-work-1/activity');
  });
});

describe('RedisKeys', () => {
  it('puts every key under its prefix', () => {
    const keys = new RedisKeys('t1:');
    expect(keys.run('r')).toBe('t1:run:r');
    expect(keys.stage('r', 's')).toBe('t1:run:r:stage:s');
    expect(keys.allEvents().startsWith('t1:')).toBe(true);
    expect(keys.hostAllowlistAudit('sf-r-s-1')).toBe('t1:browser-allowlist-audit:sf-r-s-1');
    expect(keys.hostAllowlistAudits('local')).toBe('t1:browser-host:local:allowlist-audits');
    expect(keys.runAllowlistHosts('r')).toBe('t1:run:r:allowlist-hosts');
  });
});

describe('parseLoginCheckRequest', () => {
  it('accepts a check with its criteria', () => {
    const check = { url: 'https://a.test/account', loggedOutUrl: '*/login*', selector: '#me', cookie: 'sid' };
    expect(parseLoginCheckRequest(check)).toEqual(check);
    expect(loginCheckRoute('sf-r1-s-1')).toBe('/internal/sessions/sf-r1-s-1/check');
  });

  it.each([
    [null, 'expected an object'],
    [{ url: 'ftp://a.test/', cookie: 'sid' }, 'url must be an absolute http(s) URL'],
    [{ url: 'https://u:p@a.test/', cookie: 'sid' }, 'url must be an absolute http(s) URL'],
    [{ url: 'https://a.test/' }, 'at least one of loggedOutUrl, selector and cookie'],
    [{ url: 'https://a.test/', cookie: 'a=b' }, 'cookie must be a cookie name'],
    [{ url: 'https://a.test/', selector: '' }, 'selector must be a non-empty string'],
    [{ url: 'https://a.test/', cookie: 'sid', extra: 1 }, 'unknown field "extra"'],
  ])('refuses %j: %s', (raw, problem) => {
    expect(() => parseLoginCheckRequest(raw)).toThrow(problem);
  });
});

describe('artifactNameProblem', () => {
  it.each(['shot.png', 'report-1.json', 'a', 'A_b.c-d', 'x'.repeat(128)])('accepts %s', (name) => {
    expect(artifactNameProblem(name)).toBeUndefined();
  });

  it.each([
    ['', 'empty'],
    ['../etc/passwd', 'path separator'],
    ['a/b.png', 'path separator'],
    ['a\\b.png', 'path separator'],
    ['..', '".."'],
    ['a..png', '".."'],
    ['.hidden', 'start with a letter or digit'],
    ['-flag', 'start with a letter or digit'],
    ['sp ace.png', 'only letters'],
    ['nul\u0000.png', 'NUL'],
    ['x'.repeat(129), 'at most 128'],
    [7, 'not a string'],
  ])('refuses %j (%s)', (name, problem) => {
    expect(artifactNameProblem(name)).toContain(problem);
  });
});
