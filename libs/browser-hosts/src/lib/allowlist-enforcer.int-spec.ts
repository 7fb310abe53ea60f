import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CdpConnection } from '@stageflow/cdp';
import { evaluate, eventually, navigate, openTab, PIXEL, startSite, type TestSite } from '../testing/chrome-pages';
import type { AllowlistBlock } from './allowlist-enforcer';
import { LocalChromeAdapter } from './local-chrome.adapter';
import { launchThrowaway, type ThrowawayBrowser } from './throwaway-browser';

/**
 * allow_domains enforced at the browser for a throw-away browser, against real
 * Chromium. Host names map to the test site on 127.0.0.1 with --host-resolver-rules;
 * "never reached the site" is the proof that a request was blocked, not just reported.
 */
describe('allow_domains on a throw-away browser', () => {
  let root: string;
  let site: TestSite;
  let browser: ThrowawayBrowser;
  let cdp: CdpConnection;
  const blocks: AllowlistBlock[] = [];
  const blocked = (host: string) => blocks.find((b) => b.host === host);
  const reached = (host: string) => site.seen.some((s) => s.startsWith(`${host} `));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'sf-allow-int-'));
    site = await startSite((host, path, _req, res) => {
      const at = (h: string) => `http://${h}:${site.port}`;
      if (path.endsWith('.png')) {
        res.setHeader('content-type', 'image/gif');
        res.end(PIXEL);
        return;
      }
      res.setHeader('content-type', 'text/html');
      if (host === 'allowed.test' && path === '/page') {
        res.end(
          `<title>allowed</title>` +
            `<img id="ok" src="${at('allowed.test')}/ok.png">` +
            `<img id="bad" src="${at('cdn.blocked.test')}/x.png">` +
            `<iframe id="frame" src="${at('sub.ok.test')}/inner"></iframe>`,
        );
      } else if (host === 'sub.ok.test' && path === '/inner') {
        res.end(`<img src="${at('sub.ok.test')}/inner-ok.png"><img src="${at('evil.test')}/y.png">`);
      } else {
        res.end(`<title>${host}${path}</title>`);
      }
    });
    const adapter = new LocalChromeAdapter({
      hostId: `int-allow-${process.pid}`,
      xvfb: false,
      throwawayRoot: join(root, 'profiles'),
    });
    browser = await launchThrowaway(adapter, {
      browserId: 'allow-1',
      headed: false,
      launchArgs: ['--host-resolver-rules=MAP * 127.0.0.1'],
      allowDomains: ['allowed.test', '*.ok.test'],
      onBlocked: (b) => blocks.push(b),
    });
    cdp = await CdpConnection.connect(browser.wsEndpoint, { callTimeoutMs: 30_000 });
  });

  afterAll(async () => {
    await cdp?.close();
    await browser?.close();
    await site.close();
    await rm(root, { recursive: true, force: true });
  });

  it('loads an allowed page with its allowed images and iframe, and blocks its other subresources', async () => {
    const tab = await openTab(cdp);
    expect(await navigate(cdp, tab, `http://allowed.test:${site.port}/page`)).toBeUndefined();
    expect(await evaluate(cdp, tab, 'document.title')).toBe('allowed');
    expect(await evaluate(cdp, tab, 'document.getElementById("ok").naturalWidth')).toBe(1);
    expect(await evaluate(cdp, tab, 'document.getElementById("bad").naturalWidth')).toBe(0);

    await eventually(() => reached('sub.ok.test') && !!blocked('evil.test'), 'cross-site iframe loaded and filtered');
    expect(site.seen).toEqual(
      expect.arrayContaining(['allowed.test /page', 'allowed.test /ok.png', 'sub.ok.test /inner', 'sub.ok.test /inner-ok.png']),
    );
    expect(blocked('cdn.blocked.test')).toEqual({
      host: 'cdn.blocked.test',
      url: `http://cdn.blocked.test:${site.port}/x.png`,
      resourceType: 'Image',
      targetId: tab.targetId,
    });
    // The iframe is another site, so Chrome runs it as its own target: reached through nested auto-attach.
    expect(blocked('evil.test')).toMatchObject({ resourceType: 'Image', targetId: expect.any(String) });
    expect(blocked('evil.test')?.targetId).not.toBe(tab.targetId);
    expect(reached('cdn.blocked.test') || reached('evil.test')).toBe(false);
  });

  it('fails a navigation to a blocked host with an error page, and lets data: URLs through', async () => {
    const tab = await openTab(cdp);
    expect(await navigate(cdp, tab, `http://blocked.test:${site.port}/`)).toBe('net::ERR_BLOCKED_BY_CLIENT');
    expect(blocked('blocked.test')).toMatchObject({ resourceType: 'Document', targetId: tab.targetId });
    expect(reached('blocked.test')).toBe(false);
    expect(await navigate(cdp, tab, 'data:text/html,<title>inline</title>')).toBeUndefined();
    expect(await evaluate(cdp, tab, 'document.title')).toBe('inline');
  });

  it('blocks a popup to a blocked host, and resumes a popup to an allowed one', async () => {
    const tab = await openTab(cdp);
    await navigate(cdp, tab, `http://allowed.test:${site.port}/opener`);
    // One popup per user gesture, as in a real page.
    const opened = (url: string) => evaluate<boolean>(cdp, tab, `window.open(${JSON.stringify(url)}) !== null`, true);
    expect(await opened(`http://popup.blocked.test:${site.port}/p`)).toBe(true);
    expect(await opened(`http://allowed.test:${site.port}/popup-ok`)).toBe(true);
    await eventually(() => reached('allowed.test') && site.seen.includes('allowed.test /popup-ok'), 'allowed popup loaded');
    await eventually(() => !!blocked('popup.blocked.test'), 'blocked popup reported');
    expect(blocked('popup.blocked.test')).toMatchObject({ resourceType: 'Document' });
    expect(blocked('popup.blocked.test')?.targetId).not.toBe(tab.targetId);
    expect(reached('popup.blocked.test')).toBe(false);
    expect(browser.allowlist?.setupFailures).toEqual([]);
  });

  it('reported each blocked host once, and closes cleanly, deleting the throw-away profile', async () => {
    expect(blocks.map((b) => b.host).sort()).toEqual(['blocked.test', 'cdn.blocked.test', 'evil.test', 'popup.blocked.test']);
    expect(await readdir(join(root, 'profiles'))).toHaveLength(1);
    await cdp.close();
    await browser.close();
    // A clean exit, not a kill: losing the enforcer's connection as Chrome quits is not "lost".
    await expect(browser.exited).resolves.toEqual({ code: 0, signal: null });
    expect(await readdir(join(root, 'profiles'))).toEqual([]);
  });
});
