import { browserRecordFromHash, browserRecordToHash, type BrowserRecord } from './browser-record';

const shared: BrowserRecord = {
  browserId: 'sb-0123456789abcdef0123',
  kind: 'shared',
  hostId: 'local',
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

  it.each([
    ['an empty hash (deleted record)', {}],
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
