import { ConfigError, loadApiConfig, loadRelayConfig, loadRunnerConfig, loadServiceConfig } from '../index';

describe('loadApiConfig', () => {
  it('binds loopback on port 3000 by default and needs no token there', () => {
    const cfg = loadApiConfig({});
    expect(cfg.host).toBe('127.0.0.1');
    expect(cfg.port).toBe(3000);
    expect(cfg.token).toBeUndefined();
    expect(cfg.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'sf:' });
  });

  it('refuses a non-loopback bind without a token, and says how to fix it', () => {
    expect(() => loadApiConfig({ STAGEFLOW_API_HOST: '0.0.0.0' })).toThrow(/set STAGEFLOW_API_TOKEN/);
  });

  it('accepts a non-loopback bind with a token', () => {
    const cfg = loadApiConfig({ STAGEFLOW_API_HOST: '0.0.0.0', STAGEFLOW_API_TOKEN: 'x'.repeat(32) });
    expect(cfg.token).toHaveLength(32);
  });

  it('reports every problem at once', () => {
    try {
      loadApiConfig({ STAGEFLOW_API_PORT: 'eighty', STAGEFLOW_REDIS_URL: 'http://x', STAGEFLOW_LOG_LEVEL: 'loud' });
      throw new Error('expected ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).problems).toHaveLength(3);
    }
  });
});

describe('the api\'s live-view relay address', () => {
  it('defaults to the relay on loopback, and takes a stack-network address', () => {
    expect(loadApiConfig({}).liveViewUrl).toBe('http://127.0.0.1:3003');
    expect(loadApiConfig({ STAGEFLOW_LIVE_VIEW_URL: 'http://browser-host:3003/' }).liveViewUrl).toBe('http://browser-host:3003');
    // "Check now" on a profile runs in browser-host.
    expect(loadApiConfig({}).browserHostUrl).toBe('http://127.0.0.1:3002');
    expect(loadApiConfig({ STAGEFLOW_BROWSER_HOST_URL: 'http://browser-host:3002' }).browserHostUrl).toBe('http://browser-host:3002');
  });

  it.each([
    ['ws://relay:3003', /STAGEFLOW_LIVE_VIEW_URL="ws:\/\/relay:3003" must be a URL starting with http:\/\/ or https:\/\//],
    ['http://relay:3003/live', /must be only a scheme, host and port, such as http:\/\/127\.0\.0\.1:3003/],
    ['http://user:pw@relay:3003', /must be only a scheme, host and port/],
    ['relay:3003', /must be a URL/],
  ])('refuses %s and says what to set', (value, problem) => {
    expect(() => loadApiConfig({ STAGEFLOW_LIVE_VIEW_URL: value })).toThrow(problem);
  });
});

describe('loadRelayConfig', () => {
  it('listens on loopback 3003 and finds browser-host on its default port', () => {
    const cfg = loadRelayConfig({});
    expect(cfg).toMatchObject({ host: '127.0.0.1', port: 3003, browserHostUrl: 'http://127.0.0.1:3002' });
  });

  it('reports every problem at once', () => {
    expect(() => loadRelayConfig({ STAGEFLOW_RELAY_BIND: 'everywhere', STAGEFLOW_RELAY_PORT: '0', STAGEFLOW_BROWSER_HOST_URL: 'browser-host' })).toThrow(
      expect.objectContaining({ problems: [expect.stringContaining('STAGEFLOW_RELAY_BIND'), expect.stringContaining('STAGEFLOW_RELAY_PORT'), expect.stringContaining('STAGEFLOW_BROWSER_HOST_URL')] }),
    );
  });
});

describe('loadRunnerConfig', () => {
  it('recovers a killed runner within 15 s by default', () => {
    const cfg = loadRunnerConfig({ STAGEFLOW_HOME: '/tmp/sf' });
    expect(cfg.lockDurationMs + cfg.stalledIntervalMs).toBeLessThanOrEqual(15000);
    expect(cfg.workDir).toBe('/tmp/sf/work');
  });

  it('finds browser-host on its default port, and refuses a URL that is not http(s)', () => {
    expect(loadRunnerConfig({}).browserHostUrl).toBe('http://127.0.0.1:3002');
    expect(() => loadRunnerConfig({ STAGEFLOW_BROWSER_HOST_URL: 'file:///tmp/x' })).toThrow(/STAGEFLOW_BROWSER_HOST_URL/);
  });
});

describe('artifacts root', () => {
  it('defaults to <home>/artifacts for the api and the runner alike, with a 64 MiB cap', () => {
    const env = { STAGEFLOW_HOME: '/srv/sf' };
    expect(loadApiConfig(env).artifactsRoot).toBe('/srv/sf/artifacts');
    expect(loadRunnerConfig(env).artifactsRoot).toBe('/srv/sf/artifacts');
    expect(loadRunnerConfig(env).artifactMaxBytes).toBe(64 * 1024 * 1024);
  });

  it('takes STAGEFLOW_ARTIFACTS_ROOT, and refuses a relative one saying why', () => {
    expect(loadApiConfig({ STAGEFLOW_ARTIFACTS_ROOT: '/data/artifacts' }).artifactsRoot).toBe('/data/artifacts');
    expect(() => loadApiConfig({ STAGEFLOW_ARTIFACTS_ROOT: 'artifacts' })).toThrow(/STAGEFLOW_ARTIFACTS_ROOT="artifacts" must be an absolute path/);
    expect(() => loadRunnerConfig({ STAGEFLOW_ARTIFACTS_ROOT: './a' })).toThrow(ConfigError);
  });

  it('bounds the per-artifact cap', () => {
    expect(loadRunnerConfig({ STAGEFLOW_ARTIFACT_MAX_BYTES: '2048' }).artifactMaxBytes).toBe(2048);
    expect(() => loadRunnerConfig({ STAGEFLOW_ARTIFACT_MAX_BYTES: '10' })).toThrow(/STAGEFLOW_ARTIFACT_MAX_BYTES="10" must be an integer from 1024/);
    expect(() => loadRunnerConfig({ STAGEFLOW_ARTIFACT_MAX_BYTES: '1e6' })).toThrow(ConfigError);
  });
});

describe('loadServiceConfig', () => {
  it('gives browser-host and the relay their own ports', () => {
    expect(loadServiceConfig('browser-host', {}).port).toBe(3002);
    expect(loadServiceConfig('live-view-relay', {}).port).toBe(3003);
  });
});
