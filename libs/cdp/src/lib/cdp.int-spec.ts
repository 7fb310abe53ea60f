import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { browserVersion } from './browser-version';
import { CdpConnection } from './cdp-connection';
import { readDevToolsActivePort } from './devtools-active-port';

/**
 * The cdp layer against a real Chromium (spawned here directly: this util lib must
 * not depend on browser-hosts). One browser for the whole file.
 */
describe('cdp against a real Chromium', () => {
  let profile: string;
  let chrome: ChildProcess;
  let exited: Promise<void>;
  let cdp: CdpConnection;

  beforeAll(async () => {
    profile = await mkdtemp(join(tmpdir(), 'sf-cdp-int-'));
    chrome = spawn(
      '/usr/bin/chromium',
      [
        // The closed test network otherwise floods the logs with update and probe requests.
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        // Chromium refuses to start its sandbox as root; only then do we drop it.
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        '--headless=new',
        `--user-data-dir=${profile}`,
        '--remote-debugging-port=0',
        'about:blank',
      ],
      { stdio: 'ignore' },
    );
    exited = new Promise((resolve) => chrome.once('exit', () => resolve()));
  });

  afterAll(async () => {
    await cdp?.close();
    if (chrome.exitCode === null && chrome.signalCode === null) chrome.kill('SIGKILL');
    await exited;
    // A killed Chromium leaves its singleton socket folder in /tmp.
    const socket = await readlink(join(profile, 'SingletonSocket')).catch(() => undefined);
    if (socket) await rm(dirname(socket), { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  });

  it('finds the browser through DevToolsActivePort and /json/version on 127.0.0.1', async () => {
    const active = await readDevToolsActivePort(profile, { timeoutMs: 60_000 });
    expect(active.wsEndpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\//);
    const version = await browserVersion(active.port, { timeoutMs: 10_000 });
    expect(version.product).toMatch(/Chrome\/\d+/);
    cdp = await CdpConnection.connect(active.wsEndpoint, { callTimeoutMs: 15_000 });
  });

  it('opens, attaches to, lists and closes tabs that each keep their own page', async () => {
    const a = await cdp.createTab();
    const b = await cdp.createTab();
    const sessionA = await cdp.attachToTab(a);
    const sessionB = await cdp.attachToTab(b);
    await cdp.send('Runtime.evaluate', { expression: 'document.title = "A"' }, { sessionId: sessionA });
    await cdp.send('Runtime.evaluate', { expression: 'document.title = "B"' }, { sessionId: sessionB });
    const titleA = await cdp.send<{ result: { value: string } }>(
      'Runtime.evaluate',
      { expression: 'document.title', returnByValue: true },
      { sessionId: sessionA },
    );
    expect(titleA.result.value).toBe('A');
    const ids = (await cdp.listPages()).map((p) => p.targetId);
    expect(ids).toEqual(expect.arrayContaining([a, b]));

    await cdp.closeTab(b);
    await cdp.closeTab(b);
    expect((await cdp.listPages()).map((p) => p.targetId)).not.toContain(b);
    await cdp.closeTab(a);
  });

  it('times out instead of hanging while a JS dialog blocks the page, and recovers once it is answered', async () => {
    const tab = await cdp.createTab();
    const session = await cdp.attachToTab(tab);
    await cdp.send('Page.enable', {}, { sessionId: session });
    const opened = cdp.waitForEvent('Page.javascriptDialogOpening', { sessionId: session, timeoutMs: 15_000 });
    const alert = cdp.send('Runtime.evaluate', { expression: 'alert("hold on")' }, { sessionId: session, timeoutMs: 30_000 });
    await opened;

    await expect(
      cdp.send('Runtime.evaluate', { expression: '1 + 1' }, { sessionId: session, timeoutMs: 1500 }),
    ).rejects.toMatchObject({ code: 'cdp_timeout' });

    await cdp.send('Page.handleJavaScriptDialog', { accept: true }, { sessionId: session });
    await alert;
    const sum = await cdp.send<{ result: { value: number } }>(
      'Runtime.evaluate',
      { expression: '1 + 1', returnByValue: true },
      { sessionId: session },
    );
    expect(sum.result.value).toBe(2);
    await cdp.closeTab(tab);
  });

  it('fails a waiting call with cdp_closed when the browser dies', async () => {
    const tab = await cdp.createTab();
    const session = await cdp.attachToTab(tab);
    const waiting = cdp.send(
      'Runtime.evaluate',
      { expression: 'new Promise(() => {})', awaitPromise: true },
      { sessionId: session, timeoutMs: 60_000 },
    );
    chrome.kill('SIGKILL');
    await expect(waiting).rejects.toMatchObject({ code: 'cdp_closed' });
    await exited;
  });
});
