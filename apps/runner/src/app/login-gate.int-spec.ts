import { ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { CdpConnection } from '@stageflow/cdp';
import type { RunEvent, StageSession } from '@stageflow/contracts';
import { loadPipelineOrThrow } from '@stageflow/pipeline';
import { uniquePrefix } from '@stageflow/testing';
import { allEvents, freePort, Harness, startHarness, waitFor, waitForRun } from '../testing/runner.harness';
import { BrowserHostProcess, startBrowserHost } from '../testing/processes.harness';

/**
 * The human login gate end to end (real runner worker, browser-host as its own
 * process, Chromium on a private Xvfb display, the demo site of
 * examples/browser-session): check → login gate → work. The operator's part
 * (signing in in the browser) is played over CDP in the gate's own tab.
 */
jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '../../../..');

function pipelineFor(site: string) {
  return loadPipelineOrThrow(`
name: login-gate
stages:
  - id: check
    command: "true"
    browser: { profile: demo, headed: false, check: &check { url: "${site}/account", logged_out_url: "*/login*", cookie: session_id } }
    output_schema: &state { type: object, properties: { logged_in: { type: boolean }, url: { type: string } }, required: [logged_in, url] }
  - id: login
    kind: gate
    message: Sign in as ada, then accept.
    verify: browser_login
    browser: { profile: demo, login_url: "${site}/login", check: *check }
    output_schema: *state
  - id: work
    kind: steps
    browser: { profile: demo, headed: false }
    input_schema: { type: object, properties: { logged_in: { const: true } }, required: [logged_in] }
    steps:
      - goto: ${site}/orders
      - extract: { field: user, selector: "#user" }
edges:
  - { from: check, to: login, if: "not output.logged_in" }
  - { from: check, to: work }
  - { from: login, to: work }
`);
}

/** Signs in on the login page open in the gate's tab, as the operator would in the live view. */
async function signInInTab(session: StageSession, user: string, password: string): Promise<void> {
  const cdp = await CdpConnection.connect(session.cdpEndpoint, { callTimeoutMs: 15_000 });
  try {
    const page = await cdp.attachToTab(session.targetId);
    // The demo site asks "Stay signed in on this device?" after the password; the page waits for the answer.
    cdp.on<{ type: string }>('Page.javascriptDialogOpening', (_params, from) => {
      if (from === page) cdp.send('Page.handleJavaScriptDialog', { accept: true }, { sessionId: page }).catch(() => undefined);
    });
    await cdp.send('Page.enable', {}, { sessionId: page });
    const evaluate = (expression: string) => cdp.send<{ result: { value: unknown } }>('Runtime.evaluate', { expression, returnByValue: true }, { sessionId: page });
    await waitFor('the login form in the gate\'s tab', async () => (await evaluate('!!document.querySelector("#username")')).result.value === true);
    await evaluate(`document.querySelector('#username').value = ${JSON.stringify(user)};
      document.querySelector('#password').value = ${JSON.stringify(password)};
      document.querySelector('#sign-in').click(); true`);
    await waitFor('the account page', async () => String((await evaluate('location.pathname')).result.value) === '/account');
  } finally {
    await cdp.close();
  }
}

describe('the human login gate', () => {
  let h: Harness;
  let host: BrowserHostProcess;
  let site: ChildProcess;
  let siteUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    site = spawn(process.execPath, [join(ROOT, 'examples/browser-session/site/server.mjs')], {
      env: { SITE_PORT: String(port), SITE_HOST: '127.0.0.1', PATH: process.env['PATH'] },
      stdio: 'ignore',
    });
    siteUrl = `http://127.0.0.1:${port}`;
    await waitFor('the demo site', async () => (await fetch(`${siteUrl}/health`).catch(() => undefined))?.ok);
    const prefix = uniquePrefix();
    // No screen here, but the console's live view is served: the gate hands over through it.
    host = await startBrowserHost(prefix, '', { STAGEFLOW_LIVE_VIEW: 'true' });
    h = await startHarness({ prefix, config: { browserHostUrl: host.url } });
  }, 120_000);

  afterAll(async () => {
    site?.kill('SIGTERM');
    await host?.stop();
    await h?.close();
  });

  const session = async (runId: string, attempt: number): Promise<StageSession> => {
    const res = await fetch(`${host.url}/internal/sessions/sf-${runId}-login-${attempt}`);
    if (res.status !== 200) throw new Error(`no login session for attempt ${attempt}: ${res.status}`);
    return (await res.json()) as StageSession;
  };

  it('opens a browser for the operator, re-checks after Accept, asks again while logged out, then the work runs signed in', async () => {
    const run = await h.runs.startRun({ pipeline: pipelineFor(siteUrl), input: {} });
    const waiting = (attempt: number) =>
      waitFor(`the login gate to wait (attempt ${attempt})`, async () => {
        const stage = await h.runs.getStage(run.id, 'login');
        return stage.state === 'waiting' && stage.attempt === attempt ? stage : undefined;
      }, 60_000);

    const first = await waiting(1);
    expect(first.gate).toEqual({
      message: 'Sign in as ada, then accept.',
      login: { handoff: 'live_view', livePath: `/api/runs/${run.id}/stages/login/live-view`, url: `${siteUrl}/login` },
    });
    await waitFor('the run to wait for the operator', async () => (await h.runs.getRun(run.id)).state === 'waiting');
    // The gate's tab is open at the login page.
    const tab = await session(run.id, 1);
    expect(tab.targetId).toBeTruthy();

    // Accept without signing in: the Host's check still sees the login page; a new gate opens.
    await h.runs.answerGate(run.id, 'login', { decision: 'accept' });
    const second = await waiting(2);
    expect(second.gate?.answer).toBeUndefined();
    const reasons = (await allEvents(h.runs, run.id))
      .filter((e): e is RunEvent<'stage.state'> => e.type === 'stage.state' && e.stageId === 'login')
      .map((e) => e.data.reason ?? '');
    expect(reasons).toContain(`still logged out after Accept (the check page ended at ${siteUrl}/login?next=%2Faccount); the login gate opens again`);
    // The first attempt's tab was closed with it.
    await waitFor('the first gate\'s session to close', async () => (await fetch(`${host.url}/internal/sessions/sf-${run.id}-login-1`)).status === 404);

    await signInInTab(await session(run.id, 2), 'ada', 'lovelace');
    await h.runs.answerGate(run.id, 'login', { decision: 'accept', note: 'signed in' });

    const done = await waitForRun(h.runs, run.id, 'ended', 120_000);
    const byId = Object.fromEntries(done.stages.map((s) => [s.id, s]));
    expect({ state: done.state, reasons: done.stages.map((s) => `${s.id}: ${s.reason ?? ''}`) }).toMatchObject({ state: 'success' });
    expect(byId['check'].envelope?.output).toEqual({ logged_in: false, url: `${siteUrl}/login?next=%2Faccount` });
    expect(byId['login'].envelope?.output).toEqual({ decision: 'accept', note: 'signed in', logged_in: true, url: `${siteUrl}/account` });
    expect(byId['work'].envelope?.output).toEqual({ user: 'ada' });
  });

  it('fails the login stage with the spec\'s sentence on a Host with no screen and no live view', async () => {
    const prefix = uniquePrefix();
    // Not in a container: the sentence's hint is the one for a desktop-less machine.
    const blind = await startBrowserHost(prefix, '', { STAGEFLOW_LIVE_VIEW: 'false', STAGEFLOW_IN_CONTAINER: 'false' });
    const other = await startHarness({ prefix, config: { browserHostUrl: blind.url } });
    try {
      const run = await other.runs.startRun({ pipeline: pipelineFor(siteUrl), input: {} });
      const done = await waitForRun(other.runs, run.id, 'ended', 120_000);
      const login = done.stages.find((s) => s.id === 'login');
      expect(done.state).toBe('failed');
      expect(login?.reason).toBe(
        'A visible browser is needed for login, but this Host has no screen and no live view. Log in on a machine with a screen first, or use a headless check only.',
      );
      // The check stage's browser is closed with the run.
      await waitFor('the run\'s browser to close', async () => (await blind.browsers()).length === 0, 30_000);
    } finally {
      await other.close();
      await blind.stop();
    }
  });
});
