import { browserRecordFromHash, browserRecordToHash, type BrowserRecord } from './browser-record';

const shared: BrowserRecord = {
  browserId: 'sb-0123456789abcdef0123',
  kind: 'shared',
  hostId: 'local',
  host: 'local',
  runId: 'lx1-abc',
  scope: 'local',
  profile: 'work',
  pid: 4242,
  cdpPort: 40123,
  wsEndpoint: 'ws://127.0.0.1:40123/devtools/browser/6c1e',
  headedMode: 'xvfb',
  leaseToken: 17,
  startedAt: '2025-01-01T00:00:00.000Z',
};

describe('browser records', () => {
  it('round-trips through Redis hash fields', () => {
    const hash = browserRecordToHash(shared);
    expect(Object.values(hash).every((v) => typeof v === 'string')).toBe(true);
    expect(browserRecordFromHash(hash)).toEqual(shared);
  });

  it('leaves absent optional fields out', () => {
    const throwaway: BrowserRecord = { ...shared, kind: 'throwaway', scope: undefined, profile: undefined, leaseToken: undefined, sessionId: 'sf-r-s-1' };
    const hash = browserRecordToHash(throwaway);
    expect(Object.keys(hash)).not.toContain('profile');
    expect(browserRecordFromHash(hash)).toEqual({ ...throwaway, scope: undefined, profile: undefined, leaseToken: undefined });
  });

  it('reads a record written before the container host as a local browser', () => {
    const { host: _host, ...old } = browserRecordToHash(shared);
    expect(browserRecordFromHash(old)).toEqual(shared);
  });

  it('keeps a container browser with its container and its address on the stack network', () => {
    const container: BrowserRecord = { ...shared, host: 'container', containerId: 'a'.repeat(64), cdpPort: 9223, wsEndpoint: 'ws://172.18.0.5:9223/devtools/browser/6c1e' };
    expect(browserRecordFromHash(browserRecordToHash(container))).toEqual(container);
  });

  it.each([
    ['an empty hash (deleted record)', {}],
    ['an unknown host', { host: 'kubernetes' }],
    ['a throw-away browser in a container', { host: 'container', kind: 'throwaway', sessionId: 'sf-r-s-1' }],
    ['a local browser off loopback', { host: 'local', wsEndpoint: 'ws://172.18.0.5:9222/devtools/browser/x' }],
    ['a container endpoint that is a name', { host: 'container', wsEndpoint: 'ws://browser:9223/devtools/browser/x' }],
    ['an unknown kind', { kind: 'container' }],
    ['a non-loopback endpoint', { wsEndpoint: 'ws://10.0.0.2:9222/devtools/browser/x' }],
    ['a pid that is not a number', { pid: 'abc' }],
    ['an unknown headed mode', { headedMode: 'window' }],
    ['a shared browser without its profile', { profile: '' }],
  ])('refuses %s', (_what, patch) => {
    const hash = Object.keys(patch).length ? { ...browserRecordToHash(shared), ...patch } : {};
    expect(browserRecordFromHash(hash as Record<string, string>)).toBeUndefined();
  });
});
