import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { browserVersion, CdpConnection } from '@stageflow/cdp';
import { BROWSER_SANDBOX_IMAGE, docker, ensureBrowserSandboxImage, logInOnTab, loginCookies, removeDockerLeftovers } from '@stageflow/testing';
import { evaluate, openTab } from '../../testing/chrome-pages';
import type { BrowserHostEvent } from '../local-chrome.adapter';
import type { LaunchedBrowser } from '../browser-host.port';
import { ContainerChromeAdapter, type ContainerChromeAdapterOptions } from './container-chrome.adapter';
import { browserContainerName, browserNetworkName, profileVolumeName } from './sandbox-container';

/**
 * The container host against real Docker and the sandbox image's Chromium. Everything
 * is labelled with this file's host ids and removed at the end. Eight containers in all.
 * The browser-host side (runs, leases, the startup sweep, Host config) is tested in
 * apps/browser-host/src/app/browsers/container-browsers.int-spec.ts.
 */
jest.setTimeout(180_000);

const dockerApi = new Docker();
const tag = randomBytes(3).toString('hex');
const hostA = `int-ca-${tag}`;
const hostB = `int-cb-${tag}`;
const scope = 'local';
const profiles = { a: `ca-${tag}`, b: `cb-${tag}` };
const volumes = Object.values(profiles).map((p) => profileVolumeName(scope, p));
const attachedNet = `sf-int-net-${tag}`;
const events: BrowserHostEvent[] = [];

const base = (hostId: string, extra: Partial<ContainerChromeAdapterOptions> = {}): ContainerChromeAdapterOptions => ({
  image: BROWSER_SANDBOX_IMAGE,
  shmSizeBytes: 256 * 1024 * 1024,
  memoryBytes: 768 * 1024 * 1024,
  pidsLimit: 300,
  hostId,
  onEvent: (e) => events.push(e),
  ...extra,
});
const owner = (profile: string, runId = `run-${tag}`) => ({ runId, scope, profile });

beforeAll(async () => {
  await ensureBrowserSandboxImage();
});
afterAll(async () => {
  for (const hostId of [hostA, hostB]) {
    await removeDockerLeftovers({ hostId, networks: [browserNetworkName(hostId)] });
  }
  await removeDockerLeftovers({ hostId: hostA, volumes, networks: [attachedNet] });
});

/** A stage logs in: a new tab, and the test's login page sets a persistent cookie. */
async function logIn(browser: LaunchedBrowser, cookie: string): Promise<void> {
  const cdp = await CdpConnection.connect(browser.wsEndpoint);
  try {
    await logInOnTab(browser.wsEndpoint, await cdp.createTab(), cookie);
  } finally {
    await cdp.close();
  }
}

async function userAgent(browser: LaunchedBrowser): Promise<string> {
  const cdp = await CdpConnection.connect(browser.wsEndpoint);
  try {
    const tab = await openTab(cdp);
    const ua = await evaluate<string>(cdp, tab, 'navigator.userAgent');
    await cdp.closeTab(tab.targetId);
    return ua;
  } finally {
    await cdp.close();
  }
}

const exists = (name: string) =>
  dockerApi
    .getContainer(name)
    .inspect()
    .then(
      () => true,
      () => false,
    );

describe('published on 127.0.0.1 (browser-host on the Docker host)', () => {
  const adapter = new ContainerChromeAdapter(base(hostA));
  let browser: LaunchedBrowser;

  afterAll(async () => {
    await adapter.closeAll();
  });

  it('starts a hardened, labelled container whose relay is bound to 127.0.0.1 only', async () => {
    browser = await adapter.launch({ browserId: `a1-${tag}`, owner: owner(profiles.a), headed: false, launchArgs: ['--lang=en-US'] });
    expect(browser.wsEndpoint).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${browser.cdpPort}/devtools/browser/[0-9a-f-]{36}$`));
    expect((await browserVersion(browser.cdpPort)).product).toMatch(/^Chrome\//);
    expect(JSON.parse(JSON.stringify(browser))).toEqual({
      browserId: `a1-${tag}`,
      pid: browser.pid,
      cdpPort: browser.cdpPort,
      wsEndpoint: browser.wsEndpoint,
      headedMode: 'headless',
      containerId: expect.stringMatching(/^[0-9a-f]{64}$/),
    });

    const info = JSON.parse(await docker('inspect', browserContainerName(`a1-${tag}`)))[0];
    expect(info.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      PidsLimit: 300,
      Memory: 768 * 1024 * 1024,
      MemorySwap: 768 * 1024 * 1024,
      ShmSize: 256 * 1024 * 1024,
      Privileged: false,
      NetworkMode: browserNetworkName(hostA),
      Tmpfs: { '/tmp': expect.stringContaining('noexec') },
    });
    expect(info.HostConfig.CapAdd ?? []).toEqual([]);
    expect(info.Config.User).toBe('1000:1000');
    expect(info.Config.Labels).toMatchObject({
      'stageflow.run': `run-${tag}`,
      'stageflow.scope': scope,
      'stageflow.profile': profiles.a,
      'stageflow.host': hostA,
      'stageflow.browser': `a1-${tag}`,
    });
    expect(info.Mounts).toEqual([expect.objectContaining({ Type: 'volume', Name: profileVolumeName(scope, profiles.a), Destination: '/profile', RW: true })]);
    // Every binding, asked for and granted, is on the Docker host's loopback.
    const bindings = [
      ...Object.values(info.HostConfig.PortBindings as Record<string, Array<{ HostIp: string }>>).flat(),
      ...Object.values(info.NetworkSettings.Ports as Record<string, Array<{ HostIp: string }> | null>).flatMap((b) => b ?? []),
    ];
    expect(bindings.length).toBeGreaterThan(0);
    expect(bindings.every((b) => b.HostIp === '127.0.0.1')).toBe(true);
    expect(await docker('port', browserContainerName(`a1-${tag}`))).toBe(`9223/tcp -> 127.0.0.1:${browser.cdpPort}`);
    // The host's browser network keeps containers from reaching each other.
    const net = JSON.parse(await docker('network', 'inspect', browserNetworkName(hostA)))[0];
    expect(net.Options['com.docker.network.bridge.enable_icc']).toBe('false');

    // Inside: Chromium as uid 1000 with the Host's switches, and a root file system it cannot write.
    const top = await docker('top', browserContainerName(`a1-${tag}`), '-o', 'pid,uid,args');
    const chrome = top.split('\n').find((l) => l.includes('/usr/lib/chromium/chromium') && !l.includes('--type=')) ?? '';
    expect(chrome).toMatch(/^\s*\d+\s+1000\s/);
    expect(chrome).toContain('--disable-background-networking --disable-component-update --no-first-run');
    expect(chrome).toContain('--remote-debugging-port=9222');
    expect(chrome).not.toContain('--stageflow-host');
    expect(top.split('\n').slice(1).every((l) => /^\s*\d+\s+1000\s/.test(l))).toBe(true);
    await expect(docker('exec', browserContainerName(`a1-${tag}`), 'touch', '/usr/x')).rejects.toThrow(/Read-only file system/);
  });

  it('keeps a login in the profile volume across a graceful close and a new container, headed on its own Xvfb', async () => {
    await logIn(browser, 'sid');
    expect(await loginCookies(browser.wsEndpoint)).toEqual(['sid']);
    await browser.close();
    expect(await exists(browserContainerName(`a1-${tag}`))).toBe(false);
    expect(await docker('volume', 'ls', '-q', '--filter', `name=^${profileVolumeName(scope, profiles.a)}$`)).toBe(profileVolumeName(scope, profiles.a));
    expect(events).toContainEqual(expect.objectContaining({ type: 'browser_exited', browserId: `a1-${tag}`, expected: true, code: 0 }));

    browser = await adapter.launch({ browserId: `a2-${tag}`, owner: owner(profiles.a, `run2-${tag}`), headed: true, launchArgs: [] });
    expect(browser.headedMode).toBe('xvfb');
    expect(await loginCookies(browser.wsEndpoint)).toEqual(['sid']);
    expect(await userAgent(browser)).not.toContain('Headless');
  });

  it('refuses a second browser on a volume a running container holds, and a volume labelled for another profile', async () => {
    await expect(adapter.launch({ browserId: `a3-${tag}`, owner: owner(profiles.a, `run3-${tag}`), headed: false, launchArgs: [] })).rejects.toMatchObject({
      code: 'profile_in_use',
    });
    const other = new ContainerChromeAdapter(base(hostB));
    await expect(other.launch({ browserId: `b9-${tag}`, owner: owner(profiles.a, `run9-${tag}`), headed: false, launchArgs: [] })).rejects.toMatchObject({
      code: 'profile_in_use',
    });
    // "a-b" + "c" and "a" + "b-c" meet in one volume name; its labels tell them apart.
    await expect(
      adapter.launch({ browserId: `a4-${tag}`, owner: { runId: `run4-${tag}`, scope: `local-${profiles.a.split('-')[0]}`, profile: profiles.a.split('-')[1] }, headed: false, launchArgs: [] }),
    ).rejects.toMatchObject({ code: 'profile_volume_conflict' });
  });

  it('after a docker kill, reports the unexpected exit and starts again on the same profile', async () => {
    const before = browser;
    await docker('kill', browserContainerName(before.browserId));
    await before.exited;
    expect(events).toContainEqual(expect.objectContaining({ type: 'browser_exited', browserId: before.browserId, expected: false }));
    // The dead container is still there (launch removes it) with Chrome's lock naming its
    // hostname; the new container's Chrome does not refuse the profile.
    browser = await adapter.launch({ browserId: before.browserId, owner: owner(profiles.a, `run2-${tag}`), headed: false, launchArgs: [] });
    expect((await browserVersion(browser.cdpPort)).product).toMatch(/^Chrome\//);
  });

  it('is adopted by a restarted host with the same id, not by another host, and swept by label', async () => {
    const restarted = new ContainerChromeAdapter(base(hostA));
    const adopted = await restarted.adopt(browser.browserId);
    expect(adopted?.wsEndpoint).toBe(browser.wsEndpoint);
    expect(adopted?.headedMode).toBe('headless');
    expect(await new ContainerChromeAdapter(base(hostB)).adopt(browser.browserId)).toBeUndefined();
    expect(await restarted.adopt(`nothing-${tag}`)).toBeUndefined();

    const second = await adapter.launch({ browserId: `b1-${tag}`, owner: owner(profiles.b, `run5-${tag}`), headed: false, launchArgs: [] });
    const found = await new ContainerChromeAdapter(base(hostA)).containers();
    expect(found.map((c) => c.browserId).sort()).toEqual([browser.browserId, second.browserId].sort());
    expect(await new ContainerChromeAdapter(base(hostB)).containers()).toEqual([]);

    // A third adapter (another restart) sweeps what it is not told to keep.
    const sweeper = new ContainerChromeAdapter(base(hostA, { onEvent: (e) => events.push(e) }));
    const swept = await sweeper.sweepOrphans((c) => c.runId === `run5-${tag}`);
    expect(swept).toEqual([browser.browserId]);
    expect(await exists(browserContainerName(browser.browserId))).toBe(false);
    expect(await exists(browserContainerName(second.browserId))).toBe(true);
    await adopted?.exited;
    await second.close();
  });

  it('makes its network again when it was removed behind its back', async () => {
    await docker('network', 'rm', browserNetworkName(hostA));
    const again = await adapter.launch({ browserId: `a7-${tag}`, owner: owner(profiles.b, `run7-${tag}`), headed: false, launchArgs: [] });
    expect((await browserVersion(again.cdpPort)).product).toMatch(/^Chrome\//);
    expect(await docker('network', 'inspect', '-f', '{{index .Options "com.docker.network.bridge.enable_icc"}}', browserNetworkName(hostA))).toBe('false');
    await again.close();
  });

  it('names the limit a container that dies at launch ran into, and leaves no container behind', async () => {
    const tight = new ContainerChromeAdapter(base(hostA, { pidsLimit: 40 }));
    await expect(tight.launch({ browserId: `a6-${tag}`, owner: owner(profiles.b), headed: false, launchArgs: [] })).rejects.toMatchObject({
      code: 'browser_launch_failed',
      message: expect.stringContaining('raise browser.container.pids_limit (now 40'),
    });
    expect(await exists(browserContainerName(`a6-${tag}`))).toBe(false);
  });

  it('names the image when it is missing', async () => {
    const missing = new ContainerChromeAdapter(base(hostA, { image: `stageflow-no-such-image-${tag}:local` }));
    await expect(missing.launch({ browserId: `a5-${tag}`, owner: owner(profiles.b), headed: false, launchArgs: [] })).rejects.toMatchObject({
      code: 'browser_launch_failed',
      message: expect.stringContaining(`stageflow-no-such-image-${tag}:local (browser.container.image) is not on this Docker host`),
    });
  });
});

describe('attached to the stack network (browser-host in compose)', () => {
  const adapter = new ContainerChromeAdapter(base(hostA, { network: attachedNet }));

  afterAll(async () => {
    await adapter.closeAll();
  });

  it('publishes nothing and answers on its address in that network', async () => {
    await expect(adapter.launch({ browserId: `n0-${tag}`, owner: owner(profiles.b), headed: false, launchArgs: [] })).rejects.toMatchObject({
      code: 'browser_launch_failed',
      message: expect.stringContaining(`Docker network "${attachedNet}" (STAGEFLOW_BROWSER_NETWORK) does not exist`),
    });
    await docker('network', 'create', '--label', `stageflow.host=${hostA}`, attachedNet);
    const browser = await adapter.launch({ browserId: `n1-${tag}`, owner: owner(profiles.b), headed: false, launchArgs: [] });
    const info = JSON.parse(await docker('inspect', browserContainerName(`n1-${tag}`)))[0];
    const ip = info.NetworkSettings.Networks[attachedNet].IPAddress as string;
    expect(browser.wsEndpoint).toMatch(new RegExp(`^ws://${ip.replace(/\./g, '\\.')}:9223/devtools/browser/`));
    expect(info.HostConfig.PortBindings ?? {}).toEqual({});
    expect(Object.values(info.NetworkSettings.Ports ?? {}).every((b) => b === null)).toBe(true);
    expect(await docker('port', browserContainerName(`n1-${tag}`))).toBe('');
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([attachedNet]);
    expect((await browserVersion(9223, { host: ip })).product).toMatch(/^Chrome\//);
    await browser.close();
    expect(await exists(browserContainerName(`n1-${tag}`))).toBe(false);
  });
});
