import { lstat, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { browserVersion, CdpConnection } from '@stageflow/cdp';
import {
  cmdline,
  eventually,
  evaluate,
  listenAddresses,
  navigate,
  openTab,
  startSite,
  type TestSite,
} from '../testing/chrome-pages';
import type { LaunchedBrowser } from './browser-host.port';
import { HOST_SWITCHES } from './chrome-switches';
import { LocalChromeAdapter, type BrowserHostEvent } from './local-chrome.adapter';
import { isPidAlive, listProcesses, readEnviron } from './process-table';
import { launchThrowaway } from './throwaway-browser';

/**
 * The local adapter against real Chromium and Xvfb. Six launches in all; tests in a
 * describe share their browser and run in order.
 */
const exists = (p: string) => lstat(p).then(() => true, () => false);
const uniq = `${process.pid}-${Date.now().toString(36)}`;

let work: string;
let site: TestSite;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'sf-hosts-int-'));
  site = await startSite((_host, path, req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').searchParams.get('name');
    if (path === '/set' && name) res.setHeader('set-cookie', `${name}=1; Max-Age=3600; Path=/`);
    res.setHeader('content-type', 'text/html');
    res.end(`<title>${path}</title><pre id="cookies">${req.headers.cookie ?? ''}</pre>`);
  });
});
afterAll(async () => {
  await site.close();
  await rm(work, { recursive: true, force: true });
});

/** Cookies the site receives from this browser, as a user would see them on a page. */
async function cookiesSeenBySite(browser: LaunchedBrowser): Promise<string[]> {
  const cdp = await CdpConnection.connect(browser.wsEndpoint);
  try {
    const tab = await openTab(cdp);
    await navigate(cdp, tab, `http://127.0.0.1:${site.port}/echo`);
    const text = await evaluate<string>(cdp, tab, 'document.getElementById("cookies").textContent');
    await cdp.closeTab(tab.targetId);
    return text.split(/;\s*/).filter(Boolean).map((c) => c.split('=')[0]).sort();
  } finally {
    await cdp.close();
  }
}

describe('a profile browser on a Host with no screen and no Xvfb', () => {
  const hostId = `int-a-${uniq}`;
  const events: BrowserHostEvent[] = [];
  const adapter = new LocalChromeAdapter({ hostId, xvfb: false, onEvent: (e) => events.push(e) });
  const launchArgs = ['--deny-permission-prompts', '--lang=en-US', '--window-size=1280,800'];
  let profile: string;
  let browser: LaunchedBrowser;

  beforeAll(() => {
    profile = join(work, 'profile-a');
  });
  afterAll(async () => {
    await adapter.closeAll();
  });

  it('quietly runs headless, answers on 127.0.0.1 only, with the host switches first', async () => {
    expect(adapter.capabilities()).toEqual({ screen: false, liveView: true, headedMode: 'headless' });
    browser = await adapter.launch({ browserId: 'a-1', userDataDir: profile, headed: true, launchArgs });
    expect(browser.headedMode).toBe('headless');
    expect(JSON.stringify(browser)).not.toContain(profile);
    expect(inspect(browser, { depth: 6 })).not.toContain(profile);

    const version = await browserVersion(browser.cdpPort);
    expect(version.userAgent).toContain('HeadlessChrome/');
    expect(browser.wsEndpoint).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${browser.cdpPort}/devtools/browser/`));
    expect(await listenAddresses(browser.cdpPort)).toEqual(['127.0.0.1']);

    const argv = await cmdline(browser.pid);
    const first = argv.indexOf(HOST_SWITCHES[0]);
    expect(argv.slice(first, first + HOST_SWITCHES.length + 2)).toEqual([
      ...HOST_SWITCHES,
      '--lang=en-US',
      '--window-size=1280,800',
    ]);
    expect(argv.filter((a) => a === '--deny-permission-prompts')).toHaveLength(1);
    expect(argv.indexOf(`--user-data-dir=${profile}`)).toBeGreaterThan(first);
    expect(argv).toContain('--headless=new');
  });

  it('shares cookies between two tabs, and navigating one does not move the other', async () => {
    const cdp = await CdpConnection.connect(browser.wsEndpoint);
    const a = await openTab(cdp);
    const b = await openTab(cdp);
    await navigate(cdp, a, `http://127.0.0.1:${site.port}/set?name=persist`);
    expect(await navigate(cdp, b, `http://127.0.0.1:${site.port}/echo`)).toBeUndefined();
    expect(await evaluate(cdp, b, 'document.getElementById("cookies").textContent')).toBe('persist=1');

    await navigate(cdp, a, `http://127.0.0.1:${site.port}/elsewhere`);
    expect(await evaluate(cdp, b, 'location.pathname')).toBe('/echo');
    const urls = (await cdp.listPages()).map((p) => new URL(p.url).pathname);
    expect(urls).toEqual(expect.arrayContaining(['/elsewhere', '/echo']));
    await cdp.closeTab(a.targetId);
    await cdp.closeTab(b.targetId);
    await cdp.close();
  });

  it('keeps the persistent cookie through a graceful close and relaunch', async () => {
    const pid = browser.pid;
    await browser.close();
    expect(isPidAlive(pid)).toBe(false);
    expect(await exists(join(profile, 'SingletonLock'))).toBe(false);
    browser = await adapter.launch({ browserId: 'a-2', userDataDir: profile, headed: false, launchArgs });
    expect(await cookiesSeenBySite(browser)).toEqual(['persist']);
  });

  it('after SIGKILL, removes the stale SingletonLock (pid dead) and relaunches with the flushed cookies', async () => {
    const cdp = await CdpConnection.connect(browser.wsEndpoint);
    const tab = await openTab(cdp);
    await navigate(cdp, tab, `http://127.0.0.1:${site.port}/set?name=late`);
    await cdp.close();
    // Chrome commits cookies to disk about every 30 s; a cookie this young is expected to be
    // lost on a hard kill (measured: lost at 5 s, kept at 35 s). Not asserted either way.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const killed = browser.pid;
    await browser.kill();
    expect(await readlink(join(profile, 'SingletonLock'))).toBe(`${hostname()}-${killed}`);
    const socketDir = join(await readlink(join(profile, 'SingletonSocket')), '..');

    browser = await adapter.launch({ browserId: 'a-3', userDataDir: profile, headed: false, launchArgs });
    expect(events).toContainEqual({
      type: 'stale_profile_lock_removed',
      browserId: 'a-3',
      ownerPid: killed,
      reason: 'owner_dead',
    });
    expect(await readlink(join(profile, 'SingletonLock'))).toBe(`${hostname()}-${browser.pid}`);
    expect(await exists(socketDir)).toBe(false);
    expect(await cookiesSeenBySite(browser)).toContain('persist');
  });

  it('refuses a profile whose SingletonLock belongs to a live browser, and leaves that browser alone', async () => {
    const otherHostProcess = new LocalChromeAdapter({ hostId, xvfb: false });
    await expect(
      otherHostProcess.launch({ browserId: 'a-intruder', userDataDir: profile, headed: false, launchArgs }),
    ).rejects.toMatchObject({ code: 'profile_in_use', details: { pid: browser.pid } });
    expect(await readlink(join(profile, 'SingletonLock'))).toBe(`${hostname()}-${browser.pid}`);
    await expect(browserVersion(browser.cdpPort)).resolves.toBeDefined();
    await browser.close();
  });
});

describe('a headed browser on a Host with Xvfb and no DISPLAY', () => {
  const adapter = new LocalChromeAdapter({
    hostId: `int-x-${uniq}`,
    throwawayRoot: join(tmpdir(), `sf-int-x-${uniq}`),
  });
  afterAll(async () => {
    await adapter.closeAll();
    await rm(adapter.throwawayRoot, { recursive: true, force: true });
  });

  it('runs headed on a private display, and close stops the display and deletes the throw-away profile', async () => {
    expect(adapter.capabilities()).toEqual({ screen: false, liveView: true, headedMode: 'xvfb' });
    const browser = await launchThrowaway(adapter, { browserId: 'x-1', headed: true, launchArgs: [] });
    expect(browser.headedMode).toBe('xvfb');

    const argv = await cmdline(browser.pid);
    expect(argv.filter((a) => a.startsWith('--headless'))).toEqual([]);
    const display = (await readEnviron(browser.pid))?.['DISPLAY'];
    expect(display).toMatch(/^:\d+$/);
    const socket = `/tmp/.X11-unix/X${display?.slice(1)}`;
    expect(await exists(socket)).toBe(true);
    const xvfb = await xvfbOf('x-1');
    expect(xvfb).toHaveLength(1);

    const version = await browserVersion(browser.cdpPort);
    expect(version.userAgent).toMatch(/ Chrome\/\d+/);
    expect(version.userAgent).not.toContain('Headless');
    const cdp = await CdpConnection.connect(browser.wsEndpoint);
    const tab = await openTab(cdp);
    expect(await evaluate<string>(cdp, tab, 'navigator.userAgent')).toBe(version.userAgent);
    await cdp.close();
    const [profileDir] = await readdir(adapter.throwawayRoot);
    expect(profileDir).toMatch(/^x-1\./);

    await browser.close();
    expect(isPidAlive(xvfb[0])).toBe(false);
    expect(await exists(socket)).toBe(false);
    expect(await readdir(adapter.throwawayRoot)).toEqual([]);
  });
});

describe('the orphan sweep after a host restart', () => {
  const hostId = `int-s-${uniq}`;
  const throwawayRoot = join(tmpdir(), `sf-int-s-${uniq}`);
  const before = new LocalChromeAdapter({ hostId, throwawayRoot });
  afterAll(async () => {
    await before.closeAll();
    await rm(throwawayRoot, { recursive: true, force: true });
  });

  it('ends an unknown browser with its display and temp profile, and leaves a known one running', async () => {
    const orphan = await launchThrowaway(before, { browserId: 's-orphan', headed: true, launchArgs: [] });
    const known = await before.launch({
      browserId: 's-known',
      userDataDir: join(work, 'profile-s'),
      headed: false,
      launchArgs: [],
    });
    const orphanDisplay = await xvfbOf('s-orphan');
    expect(orphanDisplay).toHaveLength(1);

    const restarted = new LocalChromeAdapter({ hostId, throwawayRoot });
    const report = await restarted.sweepOrphans(['s-known', 'some-other-run']);

    expect(report).toMatchObject({ browsers: ['s-orphan'], displays: ['s-orphan'], profiles: ['s-orphan'] });
    await eventually(() => !isPidAlive(orphan.pid), 'orphan browser gone');
    expect(isPidAlive(orphanDisplay[0])).toBe(false);
    expect(await readdir(throwawayRoot)).toEqual([]);
    await expect(browserVersion(known.cdpPort)).resolves.toBeDefined();
    await known.close();
  });
});

/** Pids of the Xvfb started for `browserId`. */
async function xvfbOf(browserId: string): Promise<number[]> {
  const pids: number[] = [];
  for (const p of await listProcesses()) {
    if (!p.argv[0]?.endsWith('Xvfb')) continue;
    if ((await readEnviron(p.pid))?.['STAGEFLOW_BROWSER_ID'] === browserId) pids.push(p.pid);
  }
  return pids;
}

