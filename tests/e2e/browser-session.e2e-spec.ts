/**
 * examples/browser-session on the composed stack, the way its README drives it:
 * check → login gate → two parallel work stages sharing the login, with the
 * container host (compose's default) and then with the local host
 * (STAGEFLOW_BROWSER_HOST=local, browser-host recreated). The operator's sign-in
 * is the example's documented script, run inside browser-host.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { recreateBrowserHost, REPO_ROOT, run } from './support/compose-stack';
import { api, pollUntil, RunView, StageView } from './support/stageflow-client';

// Builds nothing, but drives real browsers through a login gate: minutes, not seconds.
jest.setTimeout(600_000);

const YAML = readFileSync(join(REPO_ROOT, 'examples/browser-session/pipeline.yaml'), 'utf8');
const LOGIN_SCRIPT = join(REPO_ROOT, 'examples/browser-session/login-over-cdp.mjs');
const startedHere = process.env['STAGEFLOW_E2E_STARTED'] === '1';

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

/** Runs a test started, cancelled after it whatever happened: an unfinished run would hold the profile's lease. */
const started: string[] = [];

async function startRun(): Promise<Run> {
  const res = await api<Run>('POST', '/api/runs', { yaml: YAML });
  expect(res.status).toBe(201);
  started.push(res.body.id);
  return res.body;
}

const ended = (r: Run) => ['success', 'failed', 'cancelled', 'abandoned'].includes(r.state);

/** The example README's sign-in step: the script, inside browser-host, against the gate's tab. */
async function signIn(runId: string): Promise<void> {
  const script = readFileSync(LOGIN_SCRIPT);
  const res = await new Promise<{ code: number; output: string }>((resolve) => {
    const child = spawn(
      'docker',
      ['compose', '-p', 'stageflow-e2e', '-f', join(REPO_ROOT, 'docker-compose.yml'), 'exec', '-T', 'browser-host', 'node', '--input-type=module', '-', runId],
      { cwd: REPO_ROOT, env: { ...process.env, STAGEFLOW_NETWORK: 'stageflow-e2e' } },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c));
    child.stderr.on('data', (c: Buffer) => (output += c));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
    child.stdin.end(script);
  });
  expect({ code: res.code, output: res.output.trim().split('\n').pop() }).toEqual({ code: 0, output: '{"signedIn":true,"user":"ada"}' });
}

/** Runs the example through its gate: waits for the login gate, signs in, accepts, waits for the end. */
async function throughTheGate(runId: string): Promise<Run> {
  const waiting = await pollUntil<Run>(`/api/runs/${runId}`, (r) => stage(r, 'login').state === 'waiting' || ended(r), 180_000);
  expect({ state: waiting.state, login: stage(waiting, 'login').state, reason: waiting.reason }).toMatchObject({ login: 'waiting' });
  const gate = stage(waiting, 'login').gate;
  expect(gate?.login).toEqual({ handoff: 'live_view', livePath: `/api/runs/${runId}/stages/login/live-view`, url: 'http://demo-site:4300/login' });
  expect(stage(waiting, 'check').envelope?.output).toEqual({ logged_in: false, url: 'http://demo-site:4300/login?next=%2Faccount' });
  await signIn(runId);
  const answer = await api('POST', `/api/runs/${runId}/stages/login/gate`, { decision: 'accept' });
  expect(answer.status).toBe(200);
  return pollUntil<Run>(`/api/runs/${runId}`, ended, 180_000);
}

function expectWorkDone(done: Run): void {
  // The stages' states and reasons say why, should the run not succeed.
  if (done.state !== 'success') throw new Error(`run ${done.id} ended ${done.state}: ${JSON.stringify(done.stages.map((s) => `${s.id}: ${s.state} ${s.reason ?? ''} ${(s as { logTail?: string[] }).logTail?.join(' | ') ?? ''}`))}`);
  expect(stage(done, 'orders').envelope?.output).toMatchObject({ user: 'ada', orders: [{ id: 'O-1001' }, { id: 'O-1002' }] });
  expect(stage(done, 'invoices').envelope?.output).toEqual({ user: 'ada', first_invoice: 'I-2001' });
  expect(stage(done, 'invoices').envelope?.artifacts).toEqual(['invoices.png']);
}

(startedHere ? describe : describe.skip)('examples/browser-session on the composed stack', () => {
  afterEach(async () => {
    for (const id of started.splice(0)) await api('POST', `/api/runs/${id}/cancel`);
  });

  afterAll(async () => {
    // Leave browser-host as compose starts it, and the relay in its network namespace: later specs use the live view.
    await recreateBrowserHost({ STAGEFLOW_BROWSER_HOST: 'container' });
  });

  it('container host: logs in once through the gate, two stages share it; a second run started meanwhile waits for the profile; a later run finds the login kept', async () => {
    const first = await startRun();
    // Run 1 holds the profile (its check ran, its login gate waits); a second run of the
    // same pipeline, started meanwhile, queues for the profile and names the holder.
    await pollUntil<Run>(`/api/runs/${first.id}`, (r) => stage(r, 'login').state === 'waiting' || ended(r), 180_000);
    const second = await startRun();
    const queued = await pollUntil<Run>(`/api/runs/${second.id}`, (r) => stage(r, 'check').state === 'waiting', 60_000);
    expect(stage(queued, 'check').reason).toBe(`waiting for browser profile demo-site held by run ${first.id}`);

    // The browser of run 1 runs in its own hardened container on the stack network.
    const containers = await run('docker', ['ps', '--filter', 'label=stageflow.host=stageflow-e2e', '--filter', `label=stageflow.run=${first.id}`, '--format', '{{.ID}}']);
    expect(containers.output.trim().split('\n').filter(Boolean)).toHaveLength(1);

    // Run 2 only had to show the wait; it is cancelled so run 3 below starts on a quiet profile.
    expect((await api('POST', `/api/runs/${second.id}/cancel`)).status).toBe(200);

    const done = await throughTheGate(first.id);
    expectWorkDone(done);
    expect(stage(done, 'login').envelope?.output).toEqual({ decision: 'accept', logged_in: true, url: 'http://demo-site:4300/account' });
    const png = await fetch(`${process.env['STAGEFLOW_E2E_URL']}/api/runs/${first.id}/artifacts/invoices/1/invoices.png`, {
      headers: { authorization: `Bearer ${process.env['STAGEFLOW_E2E_TOKEN']}` },
    });
    expect(png.status).toBe(200);
    expect(Buffer.from(await png.arrayBuffer()).subarray(1, 4).toString('latin1')).toBe('PNG');

    // Run 3: a new container on the same profile volume after run 1's was removed: still signed in.
    const third = await startRun();
    const after = await pollUntil<Run>(`/api/runs/${third.id}`, ended, 180_000);
    expectWorkDone(after);
    expect(stage(after, 'check').envelope?.output).toEqual({ logged_in: true, url: 'http://demo-site:4300/account' });
    expect(stage(after, 'login').state).toBe('skipped');
  });

  it('local host (STAGEFLOW_BROWSER_HOST=local): the same example to success with Chromium inside browser-host', async () => {
    await recreateBrowserHost({ STAGEFLOW_BROWSER_HOST: 'local' });
    await pollUntil<unknown>('/api/health', () => true, 30_000);
    const started = await startRun();
    // The local adapter keeps its own profile folder: signed out at first.
    const done = await throughTheGate(started.id);
    expectWorkDone(done);
    const none = await run('docker', ['ps', '-q', '--filter', `label=stageflow.run=${started.id}`]);
    expect(none.output.trim()).toBe('');
  });
});
