import { ConfigError, loadServiceConfig } from '@stageflow/config';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** browser-host's settings, read by the config lib (the only reader of process.env). */
describe('browser-host settings', () => {
  it('defaults to host "local", /usr/bin/chromium and folders under the OS temp dir', () => {
    const { browser } = loadServiceConfig('browser-host', {});
    expect(browser).toMatchObject({
      chromiumPath: '/usr/bin/chromium',
      hostId: 'local',
      runtimeDir: join(tmpdir(), 'stageflow-local-run'),
      throwawayRoot: join(tmpdir(), 'stageflow-local-throwaway'),
    });
    expect(browser.display).toBeUndefined();
  });

  it('reads the screen, PATH and paths from the environment', () => {
    const { browser } = loadServiceConfig('browser-host', {
      STAGEFLOW_CHROMIUM: '/opt/chromium/chrome',
      STAGEFLOW_HOST_ID: 'host-2',
      DISPLAY: ':0',
      WAYLAND_DISPLAY: 'wayland-0',
      PATH: '/opt/bin:/usr/bin',
      STAGEFLOW_BROWSER_TMP: '/var/tmp',
    });
    expect(browser).toMatchObject({
      chromiumPath: '/opt/chromium/chrome',
      hostId: 'host-2',
      display: ':0',
      waylandDisplay: 'wayland-0',
      searchPath: '/opt/bin:/usr/bin',
      runtimeDir: '/var/tmp/stageflow-host-2-run',
      throwawayRoot: '/var/tmp/stageflow-host-2-throwaway',
    });
  });

  it('reads whether the console serves the live view and whether it runs in a container', () => {
    expect(loadServiceConfig('browser-host', { STAGEFLOW_LIVE_VIEW: 'true', STAGEFLOW_IN_CONTAINER: 'false' }).browser).toMatchObject({
      liveView: true,
      inContainer: false,
    });
    expect(loadServiceConfig('browser-host', {}).browser.liveView).toBe(false);
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_LIVE_VIEW: 'yes' })).toThrow(/STAGEFLOW_LIVE_VIEW="yes" must be one of: true, false/);
  });

  it('takes STAGEFLOW_BROWSER_HOST as the adapter for this start, and refuses another value', () => {
    expect(loadServiceConfig('browser-host', { STAGEFLOW_BROWSER_HOST: 'container' }).browser.hostKindOverride).toBe('container');
    expect(loadServiceConfig('browser-host', {}).browser.hostKindOverride).toBeUndefined();
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_BROWSER_HOST: 'docker' })).toThrow(/STAGEFLOW_BROWSER_HOST="docker" must be local or container/);
  });

  it('refuses a host id that is not one safe segment, and a runtime dir too long for unix sockets', () => {
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_HOST_ID: '../x' })).toThrow(ConfigError);
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_BROWSER_RUNTIME_DIR: `/tmp/${'x'.repeat(60)}` })).toThrow(
      /STAGEFLOW_BROWSER_RUNTIME_DIR/,
    );
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_CHROMIUM: 'chromium' })).toThrow(/absolute path/);
  });

  it('finds Docker at its default socket or a unix DOCKER_HOST, and publishes browser containers unless told their network', () => {
    expect(loadServiceConfig('browser-host', {}).browser).toMatchObject({ dockerSocket: '/var/run/docker.sock' });
    expect(loadServiceConfig('browser-host', {}).browser.browserNetwork).toBeUndefined();
    expect(
      loadServiceConfig('browser-host', { DOCKER_HOST: 'unix:///run/user/1000/docker.sock', STAGEFLOW_BROWSER_NETWORK: 'stageflow_default' }).browser,
    ).toMatchObject({ dockerSocket: '/run/user/1000/docker.sock', browserNetwork: 'stageflow_default' });
  });

  it('refuses a Docker host that is not a unix socket and a network name Docker would refuse, naming the variable', () => {
    expect(() => loadServiceConfig('browser-host', { DOCKER_HOST: 'tcp://10.0.0.5:2375' })).toThrow(/DOCKER_HOST="tcp:\/\/10.0.0.5:2375" is not a unix socket/);
    expect(() => loadServiceConfig('browser-host', { STAGEFLOW_BROWSER_NETWORK: '-net' })).toThrow(/STAGEFLOW_BROWSER_NETWORK="-net" must be a Docker network name/);
  });
});
