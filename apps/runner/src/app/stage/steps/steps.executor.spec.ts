import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from '@stageflow/artifacts';
import { CdpError } from '@stageflow/cdp';
import type { StageSession } from '@stageflow/contracts';
import type { StepAction, StepsStageDefinition } from '@stageflow/pipeline';
import type { KeyDefinition } from './press-keys';
import type { NavigateResult, ProbePurpose, ProbeResult, ReadResult, StageTab, StageTabConnector } from './stage-tab';
import { describeStep, StepsExecutor } from './steps.executor';

/** An element of the fake page. */
interface FakeElement {
  text?: string;
  attributes?: Record<string, string>;
  /** What probing it answers until `readyAt` (ms since the step began); then ready. */
  until?: { state: ProbeResult['state']; readyAt: number; by?: string };
  editable?: boolean;
}

/**
 * A page in memory, enough to drive the executor: selectors map to elements,
 * typing goes to the focused field, a click on "#login" navigates to /account.
 */
class FakeTab implements StageTab {
  url = 'about:blank';
  elements = new Map<string, FakeElement>();
  typed: Array<{ selector?: string; text: string }> = [];
  keys: string[] = [];
  clicks: Array<[number, number]> = [];
  focused?: string;
  closed = 0;
  loaded = new Set<string>();
  text = '';
  navigateError?: string;
  hangNavigation = false;
  failNextProbe?: Error;
  private started = Date.now();

  async navigate(url: string): Promise<NavigateResult> {
    if (this.navigateError) return { errorText: this.navigateError };
    this.url = url;
    this.started = Date.now();
    const loaderId = `L${this.loaded.size + 1}`;
    if (!this.hangNavigation) this.loaded.add(loaderId);
    return { loaderId };
  }
  hasLoaded(loaderId: string): boolean {
    return this.loaded.has(loaderId);
  }
  async probe(selector: string, purpose: ProbePurpose): Promise<ProbeResult> {
    if (this.failNextProbe) {
      const error = this.failNextProbe;
      this.failNextProbe = undefined;
      throw error;
    }
    if (selector.startsWith('!')) return { state: 'invalid_selector', message: `'${selector}' is not a valid selector.` };
    const el = this.elements.get(selector);
    if (!el) return { state: 'missing' };
    if (el.until && Date.now() - this.started < el.until.readyAt) {
      return el.until.state === 'covered' ? { state: 'covered', by: el.until.by ?? 'div' } : ({ state: el.until.state } as ProbeResult);
    }
    if (purpose === 'fill' && el.editable === false) return { state: 'not_editable', tag: 'button#go' };
    if (purpose === 'fill' || purpose === 'focus') this.focused = selector;
    return { state: 'ready', x: 10, y: 20 };
  }
  async clickAt(x: number, y: number): Promise<void> {
    this.clicks.push([x, y]);
  }
  async insertText(text: string): Promise<void> {
    this.typed.push({ selector: this.focused, text });
  }
  async pressKey(key: KeyDefinition): Promise<void> {
    this.keys.push(`${this.focused ?? '-'}:${key.key}`);
  }
  async currentUrl(): Promise<string> {
    return this.url;
  }
  async showsText(text: string): Promise<boolean> {
    return this.text.includes(text);
  }
  async read(selector: string, attribute: string | undefined): Promise<ReadResult> {
    const el = this.elements.get(selector);
    if (!el) return { state: 'missing' };
    if (attribute === undefined) return { state: 'ready', value: el.text ?? '' };
    const value = el.attributes?.[attribute];
    return value === undefined ? { state: 'no_attribute' } : { state: 'ready', value };
  }
  async screenshot(fullPage: boolean): Promise<Buffer> {
    return Buffer.from(`png:${fullPage ? 'full' : 'viewport'}:${this.url}`);
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

const session = { sessionId: 's1', cdpEndpoint: 'ws://127.0.0.1:1/devtools/browser/x', targetId: 't1', headedMode: 'headless' } as StageSession;
const job = { runId: 'run-1', stageId: 'login', attempt: 1 };

function stageOf(steps: StepAction[]): StepsStageDefinition {
  return { id: 'login', kind: 'steps', browser: { headed: false, allowDomains: [] }, steps, timeoutSeconds: 60, retries: 0 };
}

describe('StepsExecutor', () => {
  let root: string;
  let tab: FakeTab;
  let store: ArtifactStore;
  let executor: StepsExecutor;
  let lines: string[];
  let connector: StageTabConnector & { open: jest.Mock };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sf-steps-'));
    tab = new FakeTab();
    store = new ArtifactStore({ root, maxBytes: 4096 });
    connector = { open: jest.fn(async () => tab) };
    executor = new StepsExecutor(connector, store);
    lines = [];
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const run = (steps: StepAction[], signal = new AbortController().signal) =>
    executor.run({ job, stage: stageOf(steps), session, signal, log: (l) => lines.push(l) });

  it('logs in: runs every step in order, extracts the output and stores the screenshot', async () => {
    tab.elements.set('#user', {});
    tab.elements.set('#password', {});
    tab.elements.set('#login', {});
    tab.elements.set('#name', { text: 'Ada' });
    tab.elements.set('a.profile', { attributes: { href: '/u/ada' } });
    tab.text = 'Welcome, Ada';
    const outcome = await run([
      { action: 'goto', url: 'http://site.test/login' },
      { action: 'fill', selector: '#user', value: 'ada' },
      { action: 'fill', selector: '#password', value: 's3cret-value' },
      { action: 'click', selector: '#login' },
      { action: 'press', key: 'Enter', selector: '#password' },
      { action: 'wait_for', condition: 'url', value: '*//site.test/*' },
      { action: 'wait_for', condition: 'text', value: 'Welcome' },
      { action: 'wait_for', condition: 'selector', value: '#name' },
      { action: 'extract', field: 'name', selector: '#name' },
      { action: 'extract', field: 'profile', selector: 'a.profile', attribute: 'href' },
      { action: 'screenshot', name: 'account.png', fullPage: true },
    ]);

    expect(outcome).toEqual({ ok: true, output: { name: 'Ada', profile: '/u/ada' }, artifacts: ['account.png'] });
    expect(tab.typed).toEqual([
      { selector: '#user', text: 'ada' },
      { selector: '#password', text: 's3cret-value' },
    ]);
    expect(tab.clicks).toEqual([[10, 20]]);
    expect(tab.keys).toEqual(['#password:Enter']);
    expect(readFileSync(join(root, 'run-1', 'login', '1', 'account.png'), 'utf8')).toBe('png:full:http://site.test/login');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toMatch(/^step 1\/11 goto "http:\/\/site.test\/login": ok \(\d+ ms\)$/);
    expect(lines[2]).toMatch(/^step 3\/11 fill "#password": ok/);
    // The fill value never reaches a log line.
    expect(lines.join('\n')).not.toContain('s3cret-value');
    expect(tab.closed).toBeGreaterThan(0);
  });

  it('fails on the first step that cannot be done, naming the step, its action and why, and runs no further step', async () => {
    const outcome = await run([
      { action: 'goto', url: 'http://site.test/login' },
      { action: 'click', selector: '#login', timeoutSeconds: 1 },
      { action: 'screenshot', name: 'never.png', fullPage: false },
    ]);
    expect(outcome).toEqual({
      ok: false,
      error: 'step 2 (click "#login"): no element matches the selector after 1 s',
      artifacts: [],
    });
    expect(lines[1]).toBe('step 2/3 click "#login": failed: no element matches the selector after 1 s');
    expect(lines).toHaveLength(2);
  });

  it('waits for an element that appears, and says what it waited for last when it never gets ready', async () => {
    tab.elements.set('#late', { until: { state: 'hidden', readyAt: 300 } });
    tab.elements.set('#covered', { until: { state: 'covered', readyAt: 60_000, by: 'div.overlay' } });
    await expect(run([{ action: 'click', selector: '#late', timeoutSeconds: 2 }])).resolves.toMatchObject({ ok: true });
    await expect(run([{ action: 'click', selector: '#covered', timeoutSeconds: 1 }])).resolves.toMatchObject({
      ok: false,
      error: 'step 1 (click "#covered"): the element is covered by another element (div.overlay) after 1 s',
    });
  });

  it('fails at once, without waiting, for a selector the browser cannot parse or a field that is not a text field', async () => {
    tab.elements.set('#go', { editable: false });
    const started = Date.now();
    await expect(run([{ action: 'click', selector: '!bad', timeoutSeconds: 30 }])).resolves.toMatchObject({
      error: expect.stringMatching(/^step 1 \(click "!bad"\): the selector is not valid CSS: /),
    });
    await expect(run([{ action: 'fill', selector: '#go', value: 'x', timeoutSeconds: 30 }])).resolves.toMatchObject({
      error: 'step 1 (fill "#go"): the element is not a text field (an input, textarea or contenteditable element) but button#go',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('reports a page that does not load and a URL that never matches', async () => {
    tab.navigateError = 'net::ERR_CONNECTION_REFUSED';
    await expect(run([{ action: 'goto', url: 'http://127.0.0.1:9/' }])).resolves.toMatchObject({
      error: 'step 1 (goto "http://127.0.0.1:9/"): the browser could not load it: net::ERR_CONNECTION_REFUSED',
    });
    tab.navigateError = undefined;
    tab.hangNavigation = true;
    await expect(run([{ action: 'goto', url: 'http://site.test/slow', timeoutSeconds: 1 }])).resolves.toMatchObject({
      error: 'step 1 (goto "http://site.test/slow"): the page did not finish loading after 1 s',
    });
    await expect(run([{ action: 'wait_for', condition: 'url', value: '*/account*', timeoutSeconds: 1 }])).resolves.toMatchObject({
      error: 'step 1 (wait_for url "*/account*"): the URL is "http://site.test/slow", which does not match "*/account*" after 1 s',
    });
  });

  it('retries a lookup that fails while the page changes, and fails plainly when the browser goes away', async () => {
    tab.elements.set('#x', {});
    tab.failNextProbe = new CdpError('cdp_protocol_error', 'Runtime.evaluate failed: Execution context was destroyed.');
    await expect(run([{ action: 'click', selector: '#x', timeoutSeconds: 2 }])).resolves.toMatchObject({ ok: true });
    tab.failNextProbe = new CdpError('cdp_closed', 'The browser connection closed.');
    await expect(run([{ action: 'click', selector: '#x', timeoutSeconds: 2 }])).resolves.toMatchObject({
      error: 'step 1 (click "#x"): the connection to the browser closed (the browser or the stage\'s tab went away)',
    });
  });

  it('fails an extract of an attribute the element lacks, and a screenshot over the artifact cap', async () => {
    tab.elements.set('a', { attributes: {} });
    await expect(run([{ action: 'extract', field: 'link', selector: 'a', attribute: 'href', timeoutSeconds: 1 }])).resolves.toMatchObject({
      error: 'step 1 (extract "link" from "a" (attribute "href")): the element has no attribute "href" after 1 s',
    });
    tab.screenshot = async () => Buffer.alloc(5000);
    await expect(run([{ action: 'screenshot', name: 'big.png', fullPage: true }])).resolves.toMatchObject({
      ok: false,
      error: expect.stringMatching(/^step 1 \(screenshot "big.png"\): Artifact "big.png" is 5000 bytes; the limit is 4096 bytes/),
      artifacts: [],
    });
  });

  it('keeps the screenshots taken before a failing step as artifacts', async () => {
    const outcome = await run([
      { action: 'screenshot', name: 'before.png', fullPage: false },
      { action: 'wait_for', condition: 'text', value: 'never', timeoutSeconds: 1 },
    ]);
    expect(outcome).toMatchObject({ ok: false, artifacts: ['before.png'] });
    expect((await store.list('run-1')).map((a) => a.name)).toEqual(['before.png']);
  });

  it('stops the current step at once when the attempt is stopped, and closes the tab connection', async () => {
    const stop = new AbortController();
    const running = run([{ action: 'wait_for', condition: 'selector', value: '#never', timeoutSeconds: 30 }], stop.signal);
    setTimeout(() => stop.abort(), 200);
    const started = Date.now();
    await expect(running).resolves.toEqual({ ok: false, error: 'stopped', artifacts: [] });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(lines).toEqual(['step 1/1 wait_for selector "#never": stopped']);
    expect(tab.closed).toBeGreaterThan(0);
  });

  it('fails the attempt when the tab cannot be reached', async () => {
    connector.open.mockRejectedValueOnce(new CdpError('cdp_unreachable', 'Cannot connect to the browser at ws://127.0.0.1:1 (ECONNREFUSED).'));
    await expect(run([{ action: 'goto', url: 'http://x.test' }])).resolves.toEqual({
      ok: false,
      error: "could not attach to the stage's browser tab: Cannot connect to the browser at ws://127.0.0.1:1 (ECONNREFUSED).",
      artifacts: [],
    });
  });

  it('clears a field with an empty fill value', async () => {
    tab.elements.set('#q', {});
    await expect(run([{ action: 'fill', selector: '#q', value: '' }])).resolves.toMatchObject({ ok: true });
    expect(tab.keys).toEqual(['#q:Backspace']);
    expect(tab.typed).toEqual([]);
  });
});

describe('describeStep', () => {
  it.each<[StepAction, string]>([
    [{ action: 'fill', selector: '#pw', value: 'hunter2' }, 'fill "#pw"'],
    [{ action: 'press', key: 'Tab' }, 'press "Tab"'],
    [{ action: 'wait_for', condition: 'text', value: 'x'.repeat(200) }, `wait_for text "${'x'.repeat(120)}…"`],
    [{ action: 'screenshot', name: 'a.png', fullPage: false }, 'screenshot "a.png"'],
  ])('%j → %s', (step, text) => {
    expect(describeStep(step)).toBe(text);
  });
});
