/**
 * examples/browser-session's login gate answered the way the product means it:
 * the operator signs in through the live view, on the composed stack with the
 * container host (compose's default). The sign-in goes through live-view input
 * only (clicks and key presses at positions in the picture, a dialog answer),
 * never through CDP; the demo site has a fixed sign-in layout for that
 * (LAYOUT in examples/browser-session/site/server.mjs). Once over the api's
 * live-view WebSocket, as the console speaks it; once in the console itself, in
 * Debian's Chromium through playwright-core, the way the READMEs walk a newcomer
 * through it.
 *
 * Each test runs the example with a profile of its own, so it starts signed out
 * whatever ran before it on this stack.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '@stageflow/contracts';
import { chromium, type Browser, type Locator } from 'playwright-core';
import { REPO_ROOT } from './support/compose-stack';
import { isJpeg, LiveViewClient } from './support/live-view-client';
import { api, pollUntil, runHistory, RunView, stackToken, stackUrl, StageView } from './support/stageflow-client';

// Real browsers in containers, a gate answered twice: minutes, not seconds.
jest.setTimeout(480_000);

const SITE = 'http://demo-site:4300';
const EXAMPLE = readFileSync(join(REPO_ROOT, 'examples/browser-session/pipeline.yaml'), 'utf8');

/**
 * The centres of the sign-in controls in CSS pixels: the fixed layout of the demo
 * site's sign-in page and popup (LAYOUT in site/server.mjs; a change there fails here).
 */
const AT = {
  username: { x: 240, y: 114 },
  password: { x: 240, y: 166 },
  popupSignIn: { x: 240, y: 278 },
};

interface GateView {
  message: string;
  login?: { handoff: string; livePath: string; url: string };
  answer?: { decision: string };
}
type Stage = StageView & { attempt: number; gate?: GateView; envelope?: { ok: boolean; output: Record<string, unknown>; artifacts?: string[] } };
type Run = Omit<RunView, 'stages'> & { stages: Stage[] };

const stage = (r: Run, id: string): Stage => {
  const found = r.stages.find((s) => s.id === id);
  if (!found) throw new Error(`run ${r.id} has no stage ${id}`);
  return found;
};
const ended = (r: Run) => ['success', 'failed', 'cancelled', 'abandoned'].includes(r.state);
const describeRun = (r: Run) =>
  JSON.stringify(r.stages.map((s) => `${s.id}#${s.attempt}: ${s.state} ${s.reason ?? ''} ${(s as { logTail?: string[] }).logTail?.join(' | ') ?? ''}`));

/** Runs and viewers a test opened: cancelled and closed after it, whatever happened. */
const started: string[] = [];
const viewers: LiveViewClient[] = [];

/** The example as it is, with a profile of its own. */
function exampleWithProfile(profile: string): string {
  const yaml = EXAMPLE.replace(/profile: demo-site$/gm, `profile: ${profile}`);
  if (yaml.split(`profile: ${profile}`).length !== 5) throw new Error('examples/browser-session/pipeline.yaml no longer names its profile in four stages; update this test');
  return yaml;
}

async function startRun(profile: string): Promise<Run> {
  const res = await api<Run>('POST', '/api/runs', { yaml: exampleWithProfile(profile) });
  if (res.status !== 201) throw new Error(`POST /api/runs answered ${res.status}: ${JSON.stringify(res.body)}`);
  started.push(res.body.id);
  return res.body;
}

/** The login gate's attempt `attempt` waiting for the operator (the run says so a moment after the stage). */
function gateWaits(runId: string, attempt: number): Promise<Run> {
  return pollUntil<Run>(
    `/api/runs/${runId}`,
    (r) => (r.state === 'waiting' && stage(r, 'login').state === 'waiting' && stage(r, 'login').attempt === attempt) || ended(r),
    180_000,
  );
}

async function view(runId: string, mode: 'interactive' | 'view-only'): Promise<LiveViewClient> {
  const viewer = await LiveViewClient.open(runId, 'login', mode);
  viewers.push(viewer);
  return viewer;
}

/** Waits until a console element's whole text is `text`. */
async function waitForText(locator: Locator, text: string, timeoutMs = 30_000): Promise<void> {
  const exactly = new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  await locator.filter({ hasText: exactly }).waitFor({ timeout: timeoutMs });
}

async function accept(runId: string): Promise<void> {
  const res = await api('POST', `/api/runs/${runId}/stages/login/gate`, { decision: 'accept' });
  expect(res.status).toBe(200);
}

function expectSignedInWork(done: Run, user: string): void {
  if (done.state !== 'success') throw new Error(`run ${done.id} ended ${done.state}: ${describeRun(done)}`);
  expect(stage(done, 'login').envelope?.output).toEqual({ decision: 'accept', logged_in: true, url: `${SITE}/account` });
  expect(stage(done, 'orders').envelope?.output).toMatchObject({ user, orders: [{ id: 'O-1001' }, { id: 'O-1002' }] });
  expect(stage(done, 'invoices').envelope?.output).toEqual({ user, first_invoice: 'I-2001' });
}

describe('the login gate through the live view, on the composed stack', () => {
  afterEach(async () => {
    for (const viewer of viewers.splice(0)) viewer.close();
    for (const id of started.splice(0)) await api('POST', `/api/runs/${id}/cancel`);
  });

  it('over the live-view WebSocket: view-only input is refused; Accept while signed out opens a new gate; the operator signs in through a popup, keeps the login, accepts, and the work reads signed-in pages', async () => {
    const profile = `lv-ws-${randomBytes(3).toString('hex')}`;
    const run = await startRun(profile);
    const first = await gateWaits(run.id, 1);
    expect(first.state).toBe('waiting');
    expect(stage(first, 'check').envelope?.output).toEqual({ logged_in: false, url: `${SITE}/login?next=%2Faccount` });
    expect(stage(first, 'login').gate?.login).toEqual({ handoff: 'live_view', livePath: `/api/runs/${run.id}/stages/login/live-view`, url: `${SITE}/login` });

    // Watch browser: a view-only viewer sees the gate's page, and the relay refuses its input.
    const watcher = await view(run.id, 'view-only');
    expect(await watcher.next('ready')).toMatchObject({ mode: 'view-only', runId: run.id, stageId: 'login', attempt: 1, url: `${SITE}/login` });
    expect(isJpeg((await watcher.pictureAfter(0)).bytes)).toBe(true);
    const beforeRefusal = watcher.mark;
    watcher.clickAt(AT.username.x, AT.username.y);
    expect(await watcher.next('error', () => true, beforeRefusal)).toMatchObject({ code: 'input_refused' });

    // Accept while still signed out: the Host's check sees the sign-in page, and the login stage runs again with a new gate.
    const operator1 = await view(run.id, 'interactive');
    expect(await operator1.next('ready')).toMatchObject({ mode: 'interactive', attempt: 1 });
    await accept(run.id);
    expect(await operator1.next('ended')).toMatchObject({ reason: 'gate-answered' });
    expect(await operator1.closed()).toBe(4000);
    const second = await gateWaits(run.id, 2);
    expect({ state: second.state, login: stage(second, 'login').state, gate: stage(second, 'login').gate }).toEqual({
      state: 'waiting',
      login: 'waiting',
      gate: expect.objectContaining({ login: { handoff: 'live_view', livePath: `/api/runs/${run.id}/stages/login/live-view`, url: `${SITE}/login` } }),
    });
    const loginReasons = (await runHistory(run.id))
      .filter((e): e is RunEvent<'stage.state'> => e.type === 'stage.state' && e.stageId === 'login')
      .map((e) => e.data.reason ?? '');
    // The re-check's verdict (logged_in false) is the stage's reason, with the page the check ended on.
    expect(loginReasons).toContain(`still logged out after Accept (the check page ended at ${SITE}/login?next=%2Faccount); the login gate opens again`);

    // Attempt 2: a new interactive view of the new gate's tab.
    const operator = await view(run.id, 'interactive');
    expect(await operator.next('ready')).toMatchObject({ mode: 'interactive', attempt: 2, url: `${SITE}/login` });
    await operator.pictureAfter(0);

    // "Sign in with a popup": the view follows the popup window. It is shown before
    // its first script runs, so its address comes in a `url` message after `popup`.
    let mark = operator.mark;
    operator.clickAt(AT.popupSignIn.x, AT.popupSignIn.y);
    expect(await operator.next('popup', (m) => m.action === 'opened', mark)).toMatchObject({ type: 'popup', action: 'opened', depth: 1 });
    const popupShown = await operator.after('url', (m) => m.url === `${SITE}/login/popup`, mark);
    const popupPicture = await operator.pictureAfter(popupShown);
    // The popup's own geometry: its window is narrower than the tab's.
    expect(popupPicture.meta.deviceWidth).toBeLessThan(700);

    // Sign in in the popup: click the user field, type, Tab to the password, type, Enter.
    mark = operator.mark;
    operator.clickAt(AT.username.x, AT.username.y);
    operator.typeKeys('ada');
    operator.press('Tab');
    operator.typeKeys('lovelace');
    operator.press('Enter');
    // The popup posts the result to the opener and closes: the view returns to the gate's tab.
    expect(await operator.next('popup', (m) => m.action === 'closed', mark)).toEqual({ type: 'popup', action: 'closed', url: `${SITE}/login`, depth: 0 });

    // The opener got the result and asks whether to stay signed in: a confirm, answered in the view.
    const dialog = await operator.next('dialog', () => true, mark);
    expect(dialog).toMatchObject({ kind: 'confirm', message: 'Stay signed in on this device?', canAnswer: true, waitsFor: 'operator', autoAccepted: false, url: `${SITE}/login` });
    mark = operator.mark;
    operator.send({ type: 'dialog', id: dialog.id, action: 'accept' });
    expect(await operator.next('dialog-closed', (m) => m.id === dialog.id, mark)).toMatchObject({ outcome: 'accepted' });
    await operator.next('url', (m) => m.url === `${SITE}/account`, mark);
    // No input of the sign-in was refused or failed on the way.
    expect(operator.messages.filter((m) => m.type === 'error')).toEqual([]);

    await accept(run.id);
    expect(await operator.next('ended')).toMatchObject({ reason: 'gate-answered' });
    const done = await pollUntil<Run>(`/api/runs/${run.id}`, ended, 180_000);
    expectSignedInWork(done, 'ada');
    expect(stage(done, 'login').attempt).toBe(2);

    // "Stay signed in" was OK: the next run's browser (a new container on the profile's volume) is still signed in.
    const later = await startRun(profile);
    const laterDone = await pollUntil<Run>(`/api/runs/${later.id}`, ended, 180_000);
    expect({ state: laterDone.state, check: stage(laterDone, 'check').envelope?.output, login: stage(laterDone, 'login').state }).toEqual({
      state: 'success',
      check: { logged_in: true, url: `${SITE}/account` },
      login: 'skipped',
    });
  });
  it('in the console: the operator opens the run, signs in by clicking and typing in the gate\'s picture, answers the site\'s question in the overlay, accepts, and the run succeeds', async () => {
    const profile = `lv-ui-${randomBytes(3).toString('hex')}`;
    const run = await startRun(profile);
    await gateWaits(run.id, 1);

    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        // No update checks, field trials or first-run work: the test's network is closed and must not wait on it.
        args: ['--disable-background-networking', '--disable-component-update', '--no-first-run'],
      });
      const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));

      // The console, as a newcomer opens it: the token first, then the run from the runs list.
      await page.goto(`${stackUrl()}/`);
      await page.getByTestId('token-form').getByLabel('API token').fill(stackToken() ?? '');
      await page.getByRole('button', { name: 'Use token' }).click();
      await page.getByRole('link', { name: 'Runs', exact: true }).click();
      await page.locator(`tr[data-run="${run.id}"] a`).first().click();

      // The gate: its line, the page's address, and the picture.
      const gate = page.locator('[data-testid=gate][data-gate="login"]');
      await gate.waitFor();
      expect(await gate.locator('.login-line').textContent()).toBe('Log in in the browser view below, then confirm.');
      const address = gate.getByTestId('live-view-url');
      await waitForText(address, `${SITE}/login`);
      const canvas = gate.getByTestId('live-view-canvas');
      // A picture is drawn (the canvas counts them) and the view takes input.
      await gate.locator('[data-testid=live-view-canvas][data-frames]').waitFor({ timeout: 60_000 });
      await waitForText(gate.getByTestId('live-view-status'), 'Live: click the picture to focus it, then type.');

      // Where the controls are in the picture: the page's geometry from the relay
      // (a view-only viewer, as "Watch browser" is), and the site's fixed layout.
      const watcher = await view(run.id, 'view-only');
      const { meta } = await watcher.pictureAfter(0);
      const clickPage = async (point: { x: number; y: number }) => {
        const box = await canvas.boundingBox();
        if (!box) throw new Error('the live view canvas is not shown');
        const x = ((point.x * meta.pageScaleFactor) / meta.deviceWidth) * box.width;
        const y = ((point.y * meta.pageScaleFactor + meta.offsetTop) / meta.deviceHeight) * box.height;
        await canvas.click({ position: { x, y } });
      };

      await clickPage(AT.username);
      await page.keyboard.type('ada');
      await clickPage(AT.password);
      await page.keyboard.type('lovelace');
      await page.keyboard.press('Enter');

      // "Stay signed in on this device?" over the picture: Dismiss (a session cookie: this run only).
      const dialog = gate.getByTestId('live-view-dialog');
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('Stay signed in on this device?');
      await dialog.getByTestId('live-view-dialog-dismiss').click();
      await dialog.waitFor({ state: 'hidden' });
      expect(await watcher.next('dialog-closed')).toMatchObject({ outcome: 'dismissed' });
      await waitForText(address, `${SITE}/account`);

      await gate.getByRole('button', { name: 'Accept', exact: true }).click();
      await page.locator('.run-page[data-state="success"]').waitFor({ timeout: 180_000 });
      expect(pageErrors).toEqual([]);
    } finally {
      await browser?.close();
    }
    const done = await pollUntil<Run>(`/api/runs/${run.id}`, ended, 30_000);
    expectSignedInWork(done, 'ada');

    // Dismissed: the login ended with the run's browser. The next run is signed out and asks again.
    const later = await startRun(profile);
    const asked = await gateWaits(later.id, 1);
    expect({ state: asked.state, check: stage(asked, 'check').envelope?.output }).toEqual({
      state: 'waiting',
      check: { logged_in: false, url: `${SITE}/login?next=%2Faccount` },
    });
  });
});
