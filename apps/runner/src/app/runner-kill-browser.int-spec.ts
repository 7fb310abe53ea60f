import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProfileLeases } from '@stageflow/leases';
import { uniquePrefix } from '@stageflow/testing';
import { freePort, getJson, Harness, pipelineOf, runStage, startHarness, waitFor, waitForRun } from '../testing/runner.harness';
import { BrowserHostProcess, exited, spawnRunner, startBrowserHost } from '../testing/processes.harness';

/**
 * A runner SIGKILLed in the middle of a browser stage (real runner processes,
 * real browser-host process, real Redis and headless Chromium): the stage's
 * tab is closed although its runner never said so, the run keeps its profile
 * lease and its browser, the retry gets a new tab, and the run ends.
 */
jest.setTimeout(180_000);

/** Attempt 1 notes its tab and hangs; attempt 2 waits for `go`, then reports its tab. */
const STAGE = [
  'if [ "$STAGEFLOW_ATTEMPT" = 1 ]; then printf "%s %s" "$AGENT_BROWSER_CDP" "$STAGEFLOW_CDP_TARGET" > tab1; sleep 300 & wait; fi',
  'while [ ! -f go ]; do sleep 0.1; done',
  'printf \'{"target": "%s"}\' "$STAGEFLOW_CDP_TARGET" > "$STAGEFLOW_OUTPUT"',
].join('\n');

/** Page target ids of the browser behind a `ws://127.0.0.1:<port>/devtools/browser/…` endpoint. */
async function pagesOf(cdpEndpoint: string): Promise<string[] | undefined> {
  const port = Number(new URL(cdpEndpoint).port);
  const res = await getJson(port, '/json/list');
  if (res.status !== 200) return undefined;
  return (res.body as Array<{ id: string; type: string }>).filter((t) => t.type === 'page').map((t) => t.id);
}

describe('a runner killed with SIGKILL during a browser stage', () => {
  let h: Harness;
  let host: BrowserHostProcess;
  let leases: ProfileLeases;
  const runners: ChildProcess[] = [];

  beforeAll(async () => {
    const prefix = uniquePrefix();
    host = await startBrowserHost(prefix);
    h = await startHarness({ prefix, worker: false });
    leases = new ProfileLeases({ redis: h.config.redis.url, keys: h.keys });
  }, 120_000);

  afterAll(async () => {
    for (const runner of runners) if (runner.exitCode === null && runner.signalCode === null) runner.kill('SIGKILL');
    await leases?.close();
    await host?.stop();
    await h?.close();
  });

  it('closes the stage tab, keeps the lease and the browser with the run, and the retry ends the run', async () => {
    const env = { STAGEFLOW_BROWSER_HOST_URL: host.url };
    const [port1, port2] = [await freePort(), await freePort()];
    const first = spawnRunner(h, port1, { env });
    runners.push(first);
    await waitFor('runner 1 to be healthy', async () => (await getJson(port1, '/health')).status === 200, 30_000);

    const browser = { profile: 'kept', headed: false, allowDomains: [] };
    const run = await h.runs.startRun({ pipeline: pipelineOf([runStage('victim', STAGE, { browser, retries: 1 })], []), input: {} });
    const stageDir = join(h.config.workDir, run.id, 'victim');
    const [cdpEndpoint, tab1] = await waitFor('attempt 1 to note its tab', async () => {
      const noted = await readFile(join(stageDir, 'tab1'), 'utf8').catch(() => '');
      const parts = noted.split(' ');
      return parts.length === 2 && parts[1] ? parts : undefined;
    });
    expect(await pagesOf(cdpEndpoint)).toContain(tab1);
    const [chrome] = await host.browsers();

    first.kill('SIGKILL');
    await exited(first);
    const second = spawnRunner(h, port2, { env });
    runners.push(second);

    // The lost attempt is recorded (lock + stalled check, ~10 s); browser-host hears
    // the stage's change and closes its tab; nobody told it the runner died.
    await waitFor('the killed attempt\'s tab to be closed', async () => !(await pagesOf(cdpEndpoint))?.includes(tab1), 30_000);
    const retry = await waitFor('attempt 2 to run', async () => {
      const stage = await h.runs.getStage(run.id, 'victim');
      return stage.state === 'running' && stage.attempt === 2 ? stage : undefined;
    });
    expect(retry.attempt).toBe(2);

    // The run kept its lease and its browser (same process, still answering).
    expect((await leases.describe('local', 'kept')).holder?.runId).toBe(run.id);
    expect(await host.browsers()).toEqual([chrome]);
    expect(await pagesOf(cdpEndpoint)).toBeDefined();

    await writeFile(join(stageDir, 'go'), '');
    const done = await waitForRun(h.runs, run.id, 'ended', 60_000);
    expect(done.state).toBe('success');
    const victim = done.stages[0];
    expect(victim).toMatchObject({ state: 'success', attempt: 2 });
    expect((victim.envelope?.output as { target: string }).target).not.toBe(tab1);

    // The run ended: browser-host closes its browser and hands the profile back.
    await waitFor('the lease to be released', async () => !(await leases.describe('local', 'kept')).holder, 30_000);
    await waitFor('the run\'s browser to be closed', async () => (await host.browsers()).length === 0, 30_000);
  });
});
