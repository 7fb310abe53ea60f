import { writeFile } from 'node:fs/promises';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { uniquePrefix } from '@stageflow/testing';
import { Harness, pipelineOf, runStage, startHarness, waitFor, waitForRun } from '../testing/runner.harness';
import { BrowserHostProcess, startBrowserHost } from '../testing/processes.harness';

/**
 * After the run's Chromium crashed, the next browser stage re-verifies the login
 * with the run's browser.check before it works (real runner, browser-host process,
 * Chromium SIGKILLed). The login here is a session cookie, which a crash always
 * loses, so the re-verification finds it gone and the stage says so.
 */
jest.setTimeout(180_000);

const SCRIPT = join(__dirname, '../testing/cdp-tab.stage.cjs');

describe('re-verifying the login after the run\'s browser crashed', () => {
  let h: Harness;
  let host: BrowserHostProcess;
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    const prefix = uniquePrefix();
    host = await startBrowserHost(prefix);
    h = await startHarness({ prefix, config: { browserHostUrl: host.url } });
    site = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://x');
      // A session cookie (no Max-Age): it lives only as long as the browser process.
      if (url.pathname === '/set') res.setHeader('set-cookie', 'shared=1; Path=/');
      res.setHeader('content-type', 'text/html');
      res.end(`<title>${url.pathname}</title>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    site?.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    await host?.stop();
    await h?.close();
  });

  it('fails the next browser stage with a clear reason when the login did not survive the crash', async () => {
    const browser = { profile: 'crashy', headed: false, allowDomains: ['127.0.0.1'] };
    const check = { url: `${siteUrl}/account`, cookie: 'shared' };
    const pipeline = pipelineOf(
      [
        runStage('login', ['node', SCRIPT, 'set', siteUrl], { browser: { ...browser, check }, env: { NODE_PATH: join(process.cwd(), 'node_modules') } }),
        runStage('hold', 'while [ ! -f go ]; do sleep 0.1; done'),
        runStage('work', 'echo working', { browser }),
      ],
      [
        { from: 'login', to: 'hold' },
        { from: 'hold', to: 'work' },
      ],
    );
    const run = await h.runs.startRun({ pipeline, input: {} });
    await waitFor('the login stage to succeed and hold to run', async () => (await h.runs.getStage(run.id, 'hold')).state === 'running', 90_000);
    const login = await h.runs.getStage(run.id, 'login');
    expect(login.envelope?.output).toMatchObject({ logged_in: false, seesShared: true });

    // The run's Chromium dies between stages.
    const [chrome] = await host.browsers();
    process.kill(chrome.pid, 'SIGKILL');
    await waitFor('Chromium to be gone', async () => !(await host.browsers()).some((b) => b.pid === chrome.pid));
    await writeFile(join(h.config.workDir, run.id, 'hold', 'go'), '');

    const done = await waitForRun(h.runs, run.id, 'ended', 90_000);
    const work = done.stages.find((s) => s.id === 'work');
    expect(done.state).toBe('failed');
    expect(work?.reason).toBe(
      `the browser of profile crashy crashed and was restarted, and the login is gone (the check page ended at ${siteUrl}/account); run the pipeline again to log in`,
    );
    expect(work?.logTail.join('\n')).toContain(`login re-verified at ${siteUrl}/account: logged out`);
  });
});
