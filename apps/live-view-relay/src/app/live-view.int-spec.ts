import { DIALOG_TIMED_OUT_TEXT, LIVE_VIEW_CLOSE_CODES, RedisKeys, type StageSession } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { testRedisUrl } from '@stageflow/testing';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import WebSocket from 'ws';
import {
  closeTarget,
  deleteStackKeys,
  isJpeg,
  issueTicket,
  killChromiumOf,
  liveViewUrl,
  openStageSession,
  PageProbe,
  pagesOf,
  removeStack,
  stackDirs,
  startLiveViewServices,
  startSite,
  ViewerClient,
  waitFor,
  type IssuedTicket,
  type LiveViewServices,
  type Site,
  type Stack,
} from '../testing/live-view.harness';

/**
 * The live view end to end: the api (tickets, the forwarded WebSocket), the relay and
 * browser-host, each as its own process as in production, real headless Chromium, and
 * a site on 127.0.0.1. One run holds one shared browser; each test opens a stage
 * session (a tab) of its own. The page dialog time-out is 3 s (Host config). Tests run
 * in order.
 */
jest.setTimeout(240_000);

// Long enough that a loaded CI machine answers a dialog before it times out; the timeout test waits this long.
const DIALOG_TIMEOUT_SECONDS = 6;
const PIPELINE = `name: live-view
max_active_stages: 10
stages:
  - { id: form, command: "true" }
  - { id: watch, command: "true" }
  - { id: popup, command: "true" }
  - { id: dialogs, command: "true" }
  - { id: reopen, command: "true" }
  - { id: last, command: "true" }
  - { id: login, kind: gate, message: "Log in in the browser view below, then confirm." }
`;

let stack: Stack;
let services: LiveViewServices | undefined;
let hostUrl: string;
let apiUrl: string;
let http: ReturnType<typeof request>;
let site: Site;
let leases: ProfileLeases;
let runId: string;
let leaseToken: number;
/** Every ticket issued, to check no log line carries one. */
const issued: string[] = [];
const viewers: ViewerClient[] = [];
const probes: PageProbe[] = [];

beforeAll(async () => {
  stack = await stackDirs(`browser:\n  dialog_timeout_seconds: ${DIALOG_TIMEOUT_SECONDS}\n`);
  site = await startSite();
  services = await startLiveViewServices(stack, testRedisUrl());
  ({ hostUrl, apiUrl } = services);
  http = request(apiUrl);

  leases = new ProfileLeases({ redis: testRedisUrl(), keys: new RedisKeys(stack.prefix) });
  runId = (await http.post('/api/runs').send({ yaml: PIPELINE }).expect(201)).body.id;
  const grant = await leases.acquire('local', 'p1', runId);
  if (grant.status !== 'granted') throw new Error('the lease should be free');
  leaseToken = grant.grant.token;
});

afterAll(async () => {
  for (const viewer of viewers) viewer.close();
  for (const probe of probes) await probe.close().catch(() => undefined);
  await services?.stop();
  await killChromiumOf(stack.hostId);
  await leases?.close();
  await site?.close();
  await deleteStackKeys(stack, testRedisUrl());
  await removeStack(stack);
});

/** A stage session (its own tab in the run's browser), as the runner would open it. */
function openSession(stageId: string): Promise<StageSession> {
  return openStageSession(hostUrl, { runId, stageId, profile: 'p1', leaseToken });
}

async function probe(session: StageSession, targetId = session.targetId): Promise<PageProbe> {
  const p = await PageProbe.attach(session.cdpEndpoint, targetId);
  probes.push(p);
  return p;
}

async function ticket(stageId: string, mode?: 'interactive' | 'view-only'): Promise<IssuedTicket> {
  const body = await issueTicket(apiUrl, runId, stageId, mode);
  issued.push(body.ticket);
  return body;
}

function wsUrl(path: string, t: string): string {
  return liveViewUrl(apiUrl, path, t);
}

/** A viewer through the api, as the console connects. */
async function view(stageId: string, mode?: 'interactive' | 'view-only'): Promise<ViewerClient> {
  const t = await ticket(stageId, mode);
  const viewer = await ViewerClient.connect(wsUrl(t.path, t.ticket));
  viewers.push(viewer);
  await viewer.nextOfType('ready');
  return viewer;
}

const click = (at: { x: number; y: number }, extra: Record<string, unknown> = {}) => ({ type: 'mouse', action: 'click', ...at, ...extra });
const press = (key: string, modifiers?: string[]) => ({ type: 'key', action: 'press', key, ...(modifiers ? { modifiers } : {}) });

describe('through the api to the relay', () => {
  let session: StageSession;
  let page: PageProbe;

  beforeAll(async () => {
    session = await openSession('form');
    page = await probe(session);
    await page.goto(site.url('/form'));
  });

  it('shows the page: ready, the geometry, then a first frame that is a JPEG (a static page sends no screencast)', async () => {
    const viewer = await view('form');
    expect(viewer.messages[0]).toMatchObject({ type: 'ready', mode: 'interactive', runId, stageId: 'form', attempt: 1, url: site.url('/form'), dialogTimeoutSeconds: DIALOG_TIMEOUT_SECONDS });
    const frame = await viewer.frameCount(1);
    expect(isJpeg(frame)).toBe(true);
    const meta = await viewer.nextOfType('frame-meta');
    expect(meta).toMatchObject({ deviceWidth: expect.any(Number), deviceHeight: expect.any(Number), pageScaleFactor: 1, offsetTop: 0 });
    expect(meta['deviceWidth']).toBeGreaterThan(0);
    viewer.close();
  });

  it('lands a click in an input and what is typed and pasted in the page; Tab, Backspace, right and double click work', async () => {
    const viewer = await view('form');
    await viewer.frameCount(1);
    viewer.send(click(await page.centreOf('#name')));
    viewer.send(press('A', ['Shift']));
    for (const key of 'dx') viewer.send(press(key));
    viewer.send(press('Backspace'));
    viewer.send(press('a'));
    viewer.send({ type: 'text', text: ` Lovelace ${'·'.repeat(450)}` });
    viewer.send(press('Tab'));
    viewer.send(press('z'));
    const expected = `Ada Lovelace ${'·'.repeat(450)}`;
    let typed = { name: '', second: '' };
    const read = '({ name: document.getElementById("name").value, second: document.getElementById("second").value })';
    await waitFor('the typing to land', async () => {
      typed = await page.evaluate<{ name: string; second: string }>(read);
      return typed.name === expected && typed.second === 'z';
    }).catch((error: Error) => {
      throw new Error(`${error.message}; the inputs hold ${JSON.stringify(typed.name.slice(0, 40))} (${typed.name.length} characters) and ${JSON.stringify(typed.second)}`);
    });
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('second');

    const menu = await page.centreOf('#menu');
    viewer.send(click(menu, { button: 'right' }));
    viewer.send(click(menu, { clicks: 2 }));
    await waitFor('the right and the double click', async () => (await page.evaluate<string[]>('window.events')).join() === 'contextmenu,dblclick');
    expect(viewer.messages.filter((m) => m.type === 'error')).toEqual([]);
    viewer.close();
  });

  it('refuses input from a view-only ticket at the relay: the page does not change', async () => {
    await page.evaluate('document.getElementById("name").value = "before"');
    const viewer = await view('form', 'view-only');
    expect(viewer.messages[0]).toMatchObject({ type: 'ready', mode: 'view-only' });
    await viewer.frameCount(1);
    viewer.send(click(await page.centreOf('#name')));
    const error = await viewer.nextOfType('error');
    expect(error).toMatchObject({ code: 'input_refused', message: expect.stringContaining('view-only') });
    viewer.send({ type: 'text', text: 'sneaky' });
    viewer.send({ type: 'reopen' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await page.evaluate<string>('document.getElementById("name").value')).toBe('before');
    viewer.close();
  });

  it('refuses a ticket the second time, and a ticket for another stage', async () => {
    const t = await ticket('form');
    const first = await ViewerClient.connect(wsUrl(t.path, t.ticket));
    viewers.push(first);
    await expect(ViewerClient.connect(wsUrl(t.path, t.ticket))).rejects.toMatchObject({ status: 401, body: { code: 'ticket_invalid' } });
    const other = await ticket('form');
    await expect(ViewerClient.connect(wsUrl(`/api/runs/${runId}/stages/watch/live-view`, other.ticket))).rejects.toMatchObject({ status: 401 });
    await expect(ViewerClient.connect(wsUrl(other.path, other.ticket))).rejects.toMatchObject({ status: 401 });
    first.close();
  });

  it('validates every message and says what is wrong', async () => {
    const viewer = await view('form');
    viewer.send({ type: 'mouse', action: 'click', x: 2, y: 0 });
    expect(await viewer.nextOfType('error')).toMatchObject({ code: 'invalid_message', message: expect.stringContaining('"x" must be a number from 0 to 1') });
    viewer.socket.send('not json');
    expect(await viewer.next((m) => m.type === 'error' && m['code'] === 'invalid_json')).toBeDefined();
    viewer.close();
  });

  it('answers 409 for a stage with no open browser', async () => {
    expect((await http.post(`/api/runs/${runId}/stages/watch/live-view/tickets`).send({}).expect(409)).body.code).toBe('live_view_unavailable');
  });
});

describe('popups', () => {
  let session: StageSession;
  let page: PageProbe;

  beforeAll(async () => {
    session = await openSession('popup');
    page = await probe(session);
    await page.goto(site.url('/opener'));
  });

  it('follows a popup the page opens and returns to the opener when it closes; the opener gets the result', async () => {
    const viewer = await view('popup');
    const watcher = await view('popup', 'view-only');
    await viewer.frameCount(1);
    viewer.send(click(await page.centreOf('#open')));
    const opened = await viewer.next((m) => m.type === 'popup' && m['action'] === 'opened');
    expect(opened).toMatchObject({ depth: 1 });
    expect(await watcher.next((m) => m.type === 'popup' && m['action'] === 'opened')).toBeDefined();
    await viewer.next((m) => m.type === 'url' && m['url'] === site.url('/popup'));
    const framesBefore = viewer.frames.length;
    await viewer.frameCount(framesBefore + 1);

    // The popup's button fills it: a click in the middle of the picture presses it.
    viewer.send(click({ x: 0.5, y: 0.5 }));
    const closed = await viewer.next((m) => m.type === 'popup' && m['action'] === 'closed');
    expect(closed).toMatchObject({ depth: 0, url: site.url('/opener') });
    await waitFor('the opener to get the popup\'s message', async () => (await page.evaluate<string>('document.title')) === 'got:hello');
    expect(await watcher.next((m) => m.type === 'popup' && m['action'] === 'closed')).toBeDefined();
    viewer.close();
    watcher.close();
  });

  it('sees a dialog a popup opens on load (attached before its scripts ran), and the answer reaches the opener', async () => {
    const viewer = await view('popup');
    await viewer.frameCount(1);
    viewer.send(click(await page.centreOf('#open-confirm')));
    await viewer.next((m) => m.type === 'popup' && m['action'] === 'opened');
    const dialog = await viewer.nextOfType('dialog');
    expect(dialog).toMatchObject({ kind: 'confirm', message: 'Continue as Ada?', canAnswer: true, waitsFor: 'operator', url: site.url('/popup-confirm') });
    viewer.send({ type: 'dialog', id: dialog['id'], action: 'accept' });
    expect(await viewer.nextOfType('dialog-closed')).toMatchObject({ id: dialog['id'], outcome: 'accepted' });
    await waitFor('the opener to get the answer', async () => (await page.evaluate<string>('document.title')) === 'got:confirm:true');

    const popup = (await pagesOf(session.cdpEndpoint)).find((p) => p.url === site.url('/popup-confirm'));
    await closeTarget(session.cdpEndpoint, popup?.targetId as string);
    expect(await viewer.next((m) => m.type === 'popup' && m['action'] === 'closed')).toMatchObject({ depth: 0 });
    viewer.close();
  });

  it('follows a page opened without an opener (a middle click on a link): the next new page after that click', async () => {
    const viewer = await view('popup');
    await viewer.frameCount(1);
    const from = viewer.messages.length;
    viewer.send(click(await page.centreOf('#help'), { button: 'middle' }));
    expect(await viewer.next((m) => m.type === 'popup' && m['action'] === 'opened', from)).toMatchObject({ depth: 1 });
    // Its address is in `opened` when already known, else in the `url` message that follows.
    await viewer.next((m) => (m.type === 'popup' && m['action'] === 'opened' && m['url'] === site.url('/plain')) || (m.type === 'url' && m['url'] === site.url('/plain')), from);
    const opened = (await pagesOf(session.cdpEndpoint)).find((p) => p.url === site.url('/plain'));
    await closeTarget(session.cdpEndpoint, opened?.targetId as string);
    expect(await viewer.next((m) => m.type === 'popup' && m['action'] === 'closed', from)).toMatchObject({ url: site.url('/opener'), depth: 0 });
    viewer.close();
  });
});

describe('page dialogs', () => {
  let page: PageProbe;

  beforeAll(async () => {
    const session = await openSession('dialogs');
    page = await probe(session);
    await page.goto(site.url('/plain'));
  });

  it('shows a confirm to every viewer, as plain text; only the interactive one answers; the page gets true, then false', async () => {
    const viewer = await view('dialogs');
    const watcher = await view('dialogs', 'view-only');
    await viewer.frameCount(1);

    await page.startDialog('document.title = String(confirm("Delete <b>all</b>?"))');
    const dialog = await viewer.nextOfType('dialog');
    expect(dialog).toMatchObject({ kind: 'confirm', message: 'Delete <b>all</b>?', canAnswer: true, waitsFor: 'operator', autoAccepted: false });
    expect(Date.parse(dialog['timeoutAt'] as string)).toBeGreaterThan(Date.now());
    expect(await watcher.nextOfType('dialog')).toMatchObject({ id: dialog['id'], canAnswer: false, waitsFor: 'operator' });

    // The page waits for its dialog: input is refused; a viewer who joins now gets the last picture and the dialog.
    viewer.send(click({ x: 0.5, y: 0.5 }));
    expect(await viewer.nextOfType('error')).toMatchObject({ code: 'dialog_open' });
    watcher.send({ type: 'dialog', id: dialog['id'], action: 'dismiss' });
    expect(await watcher.nextOfType('error')).toMatchObject({ code: 'input_refused' });
    const late = await view('dialogs', 'view-only');
    expect(isJpeg(await late.frameCount(1))).toBe(true);
    expect(await late.nextOfType('dialog')).toMatchObject({ id: dialog['id'], kind: 'confirm', canAnswer: false });
    late.close();

    viewer.send({ type: 'dialog', id: dialog['id'], action: 'accept' });
    expect(await viewer.nextOfType('dialog-closed')).toMatchObject({ id: dialog['id'], outcome: 'accepted' });
    expect(await watcher.nextOfType('dialog-closed')).toMatchObject({ id: dialog['id'], outcome: 'accepted' });
    expect(await page.evaluate<string>('document.title')).toBe('true');

    const from = viewer.messages.length;
    await page.startDialog('document.title = String(confirm("Again?"))');
    const second = await viewer.nextOfType('dialog', from);
    viewer.send({ type: 'dialog', id: second['id'], action: 'dismiss' });
    expect(await viewer.nextOfType('dialog-closed', from)).toMatchObject({ outcome: 'dismissed' });
    expect(await page.evaluate<string>('document.title')).toBe('false');
    viewer.close();
    watcher.close();
  });

  it('fills a prompt with the page\'s default text, which Accept without editing sends', async () => {
    const viewer = await view('dialogs');
    await page.startDialog('document.title = "name:" + prompt("Your name?", "Ada")');
    const dialog = await viewer.nextOfType('dialog');
    expect(dialog).toMatchObject({ kind: 'prompt', defaultPrompt: 'Ada' });
    viewer.send({ type: 'dialog', id: dialog['id'], action: 'accept' });
    await viewer.nextOfType('dialog-closed');
    expect(await page.evaluate<string>('document.title')).toBe('name:Ada');
    viewer.close();
  });

  it('accepts an alert at once and shows it without buttons', async () => {
    const viewer = await view('dialogs');
    await page.startDialog('alert("Saved."); document.title = "after alert"');
    expect(await viewer.nextOfType('dialog')).toMatchObject({ kind: 'alert', message: 'Saved.', autoAccepted: true, canAnswer: false, waitsFor: 'nobody' });
    await waitFor('the page to go on', async () => (await page.evaluate<string>('document.title')) === 'after alert');
    expect(await viewer.nextOfType('dialog-closed', 0, 10_000)).toMatchObject({ outcome: 'accepted' });
    viewer.close();
  });

  it('dismisses a dialog nobody answers after dialog_timeout_seconds and says so; a later answer is ignored without an error', async () => {
    const viewer = await view('dialogs');
    const startedAt = Date.now();
    await page.startDialog('document.title = String(confirm("Anyone?"))');
    const dialog = await viewer.nextOfType('dialog');
    const closed = await viewer.nextOfType('dialog-closed', 0, 20_000);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(DIALOG_TIMEOUT_SECONDS * 1000 - 200);
    expect(closed).toEqual({ type: 'dialog-closed', id: dialog['id'], outcome: 'timed-out', message: DIALOG_TIMED_OUT_TEXT });
    expect(await page.evaluate<string>('document.title')).toBe('false');

    viewer.send({ type: 'dialog', id: dialog['id'], action: 'accept' });
    expect((await viewer.quietFor(500)).filter((m) => m.type === 'error')).toEqual([]);
    // The page works on: the view is not frozen.
    await page.evaluate('document.body.style.background = "#cfc"; document.title = "alive"');
    expect(await page.evaluate<string>('document.title')).toBe('alive');
    viewer.close();
  });
});

describe('Reopen browser tab', () => {
  it('opens the same address in a fresh tab of the same browser (still signed in), moves the view and closes the old tab', async () => {
    const session = await openSession('reopen');
    const page = await probe(session);
    await page.goto(site.url('/set?name=sid'));
    await page.goto(site.url('/cookies'));
    const viewer = await view('reopen');
    await viewer.frameCount(1);

    // The fresh tab's first picture may come just before or after `reopened`.
    const framesBefore = viewer.frames.length;
    viewer.send({ type: 'reopen' });
    const reopened = await viewer.nextOfType('reopened');
    expect(reopened).toEqual({ type: 'reopened', url: site.url('/cookies') });
    await viewer.frameCount(framesBefore + 1);

    viewer.send({ type: 'reopen' });
    expect(await viewer.nextOfType('error')).toMatchObject({ code: 'reopen_too_soon' });

    const now = (await (await fetch(`${hostUrl}/internal/sessions/${session.sessionId}`)).json()) as StageSession;
    expect(now.targetId).not.toBe(session.targetId);
    const pages = await pagesOf(session.cdpEndpoint);
    expect(pages.map((p) => p.targetId)).not.toContain(session.targetId);
    expect(pages.find((p) => p.targetId === now.targetId)?.url).toBe(site.url('/cookies'));
    const fresh = await probe(session, now.targetId);
    expect(await fresh.evaluate<string>('document.getElementById("cookies").textContent')).toBe('sid=1');

    // Input goes to the new tab.
    const framesBeforeInput = viewer.frames.length;
    await fresh.evaluate('document.body.innerHTML = \'<input id="q" style="position:absolute;left:0;top:0;width:100%;height:100%">\'');
    // The view has a picture of the new page before the click lands in it.
    await viewer.frameCount(framesBeforeInput + 1);
    const from = viewer.messages.length;
    viewer.send(click({ x: 0.5, y: 0.5 }));
    viewer.send(press('k'));
    await waitFor('typing in the reopened tab', async () => (await fresh.evaluate<string>('document.getElementById("q").value')) === 'k').catch((error: Error) => {
      throw new Error(`${error.message}; the relay said ${JSON.stringify(viewer.messages.slice(from))}`);
    });
    viewer.close();
  });
});

describe('the end of a view', () => {
  it('closes the interactive view when its gate is answered and refuses its unused tickets', async () => {
    await openSession('login');
    const viewer = await view('login');
    const unused = await ticket('login');
    await http.post(`/api/runs/${runId}/stages/login/gate`).send({ decision: 'accept' }).expect(200);

    expect(await viewer.nextOfType('ended')).toMatchObject({ reason: 'gate-answered' });
    expect(await viewer.closed()).toBe(LIVE_VIEW_CLOSE_CODES.ended);
    await expect(ViewerClient.connect(wsUrl(unused.path, unused.ticket))).rejects.toMatchObject({ status: expect.any(Number) });
    expect((await http.post(`/api/runs/${runId}/stages/login/live-view/tickets`).send({}).expect(409)).body.code).toMatch(/^live_view_(closed|unavailable)$/);
  });

  it('closes every view when the run is cancelled; input after that goes nowhere and tickets are refused', async () => {
    const session = await openSession('last');
    const page = await probe(session);
    await page.goto(site.url('/form'));
    const viewer = await view('last');
    const watcher = await view('last', 'view-only');
    await viewer.frameCount(1);
    const unused = await ticket('last', 'view-only');

    await http.post(`/api/runs/${runId}/cancel`).expect(200);

    for (const v of [viewer, watcher]) {
      expect(['stage-ended', 'run-ended', 'tab-closed', 'browser-gone']).toContain((await v.nextOfType('ended'))['reason']);
      expect(await v.closed()).toBe(LIVE_VIEW_CLOSE_CODES.ended);
    }
    expect(viewer.socket.readyState).toBe(WebSocket.CLOSED);
    await expect(ViewerClient.connect(wsUrl(unused.path, unused.ticket))).rejects.toMatchObject({ status: 401 });
    expect((await http.post(`/api/runs/${runId}/stages/last/live-view/tickets`).send({}).expect(409)).body.code).toBe('run_finished');
  });
});

describe('what the Host keeps', () => {
  it('logs no ticket, typed text or picture in any service\'s log', async () => {
    const logs = await Promise.all(['api.log', 'relay.log', 'browser-host.log'].map((f) => readFile(join(stack.root, f), 'utf8')));
    expect(issued.length).toBeGreaterThan(5);
    for (const log of logs) {
      for (const t of issued) expect(log).not.toContain(t);
      expect(log).not.toContain('Lovelace');
      expect(log).not.toContain('/9j/');
    }
    // The relay does log the views it opens, by ids.
    expect(logs[1]).toContain('A viewer opened a live view');
  });
});
