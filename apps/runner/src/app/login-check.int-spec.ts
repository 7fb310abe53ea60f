import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { uniquePrefix } from '@stageflow/testing';
import { Harness, pipelineOf, runStage, startHarness, waitForRun } from '../testing/runner.harness';
import { BrowserHostProcess, startBrowserHost } from '../testing/processes.harness';

/**
 * The login check (`browser.check`) end to end: a real runner worker, browser-host
 * as its own process, headless Chromium and a local site whose account page
 * redirects to its login page until a cookie is set.
 */
jest.setTimeout(180_000);

const SCRIPT = join(__dirname, '../testing/cdp-tab.stage.cjs');

describe('the login check of a browser stage', () => {
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
      const signedIn = /(^|;\s*)shared=1/.test(req.headers.cookie ?? '');
      if (url.pathname === '/account' && !signedIn) {
        res.writeHead(302, { location: '/login?next=/account' }).end();
        return;
      }
      if (url.pathname === '/set') res.setHeader('set-cookie', 'shared=1; Max-Age=3600; Path=/');
      res.setHeader('content-type', 'text/html');
      // The signed-in marker is added by script after load, as single-page apps do.
      const marker = url.pathname === '/account' ? '<script>setTimeout(() => { document.body.innerHTML = \'<p id="user">ada</p>\'; }, 300)</script>' : '';
      res.end(`<title>${url.pathname}</title><body>${marker}</body>`);
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

  const loginState = {
    type: 'object',
    properties: { logged_in: { type: 'boolean' }, url: { type: 'string' } },
    required: ['logged_in', 'url'],
  };

  it('reports {logged_in, url} from the Host: logged out before the cookie, logged in after it, in one run', async () => {
    const check = { url: `${siteUrl}/account`, loggedOutUrl: '*/login*', cookie: 'shared', selector: '#user' };
    const browser = { profile: 'site', headed: false, allowDomains: ['127.0.0.1'] };
    const pipeline = pipelineOf(
      [
        runStage('before', 'printf \'{"stage_saw": "%s"}\' "$STAGEFLOW_LOGGED_IN" > "$STAGEFLOW_OUTPUT"', {
          browser: { ...browser, check },
          outputSchema: loginState,
        }),
        runStage('login', ['node', SCRIPT, 'set', siteUrl], { browser, env: { NODE_PATH: join(process.cwd(), 'node_modules') } }),
        runStage('after', 'true', { browser: { ...browser, check }, outputSchema: loginState }),
      ],
      [
        { from: 'before', to: 'login' },
        { from: 'login', to: 'after' },
      ],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 120_000);
    const byId = Object.fromEntries(run.stages.map((s) => [s.id, s]));
    expect({ state: run.state, reasons: run.stages.map((s) => s.reason) }).toMatchObject({ state: 'success' });
    // The command's own output is kept; the Host's fields are added.
    expect(byId['before'].envelope?.output).toEqual({ stage_saw: 'false', logged_in: false, url: `${siteUrl}/login?next=/account` });
    expect(byId['after'].envelope?.output).toEqual({ logged_in: true, url: `${siteUrl}/account` });
    expect(byId['before'].logTail.join('\n')).toContain(`login check of ${siteUrl}/account: logged out`);
  });

  it('fails the stage with a clear reason when the check page does not load', async () => {
    const closed = `http://127.0.0.1:9/account`;
    const pipeline = pipelineOf(
      [runStage('check', 'true', { browser: { profile: 'site2', headed: false, allowDomains: [], check: { url: closed, cookie: 'sid' } } })],
      [],
    );
    const started = await h.runs.startRun({ pipeline, input: {} });
    const run = await waitForRun(h.runs, started.id, 'ended', 120_000);
    expect(run.state).toBe('failed');
    expect(run.stages[0].reason).toMatch(/^the login check failed \(login_check_unreachable\): The login check page http:\/\/127\.0\.0\.1:9\/account did not load \(net::ERR_/);
  });
});
