import { access, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserExit, LaunchedBrowser, LaunchOptions, ThrowawayCapableAdapter } from './browser-host.port';
import { launchThrowaway } from './throwaway-browser';

/** An adapter whose "browser" exits when told to: enough to check the profile folder's life. */
function fakeAdapter(root: string, failLaunch = false) {
  const seen: Array<LaunchOptions & { userDataDir: string }> = [];
  let exit!: (e: BrowserExit) => void;
  const adapter: ThrowawayCapableAdapter = {
    kind: 'local',
    throwawayRoot: root,
    capabilities: () => ({ screen: false, liveView: true, headedMode: 'headless' }),
    async launch(opts) {
      seen.push({ ...opts, userDataDir: opts.userDataDir ?? '' });
      if (failLaunch) throw new Error('no chromium');
      const exited = new Promise<BrowserExit>((resolve) => (exit = resolve));
      const browser: LaunchedBrowser = {
        browserId: opts.browserId,
        cdpPort: 1,
        wsEndpoint: 'ws://127.0.0.1:1/devtools/browser/x',
        pid: 1,
        headedMode: 'headless',
        exited,
        close: async () => exit({ code: 0, signal: null }),
        kill: async () => exit({ code: null, signal: 'SIGKILL' }),
      };
      return browser;
    },
  };
  return { adapter, seen, crash: () => exit({ code: null, signal: 'SIGSEGV' }) };
}

const exists = (p: string) => access(p).then(() => true, () => false);

describe('launchThrowaway', () => {
  let root: string;
  beforeEach(async () => {
    root = join(await mkdtemp(join(tmpdir(), 'sf-throwaway-unit-')), 'profiles');
  });
  afterEach(async () => {
    await rm(join(root, '..'), { recursive: true, force: true });
  });

  it('launches on a fresh 0700 folder named after the browser and deletes it on close', async () => {
    const { adapter, seen } = fakeAdapter(root);
    const browser = await launchThrowaway(adapter, { browserId: 'b1', headed: false, launchArgs: [] });
    const dir = seen[0].userDataDir;
    expect(dir.startsWith(join(root, 'b1.'))).toBe(true);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect(JSON.stringify(browser)).not.toContain(dir);
    await browser.close();
    expect(await exists(dir)).toBe(false);
  });

  it('deletes the folder when the browser dies on its own', async () => {
    const { adapter, seen, crash } = fakeAdapter(root);
    const browser = await launchThrowaway(adapter, { browserId: 'b2', headed: false, launchArgs: [] });
    crash();
    await expect(browser.exited).resolves.toEqual({ code: null, signal: 'SIGSEGV' });
    expect(await exists(seen[0].userDataDir)).toBe(false);
  });

  it('deletes the folder when the launch fails', async () => {
    const { adapter } = fakeAdapter(root, true);
    await expect(launchThrowaway(adapter, { browserId: 'b3', headed: false, launchArgs: [] })).rejects.toThrow('no chromium');
    expect(await readdir(root)).toEqual([]);
  });
});
