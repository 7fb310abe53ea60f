import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenStageSessionRequest, StageSession } from '@stageflow/contracts';
import { BrowserHostClient, BrowserHostError } from './browser-host.client';
import { sessionRequest } from './stage-executor.service';

const session: StageSession = {
  sessionId: 's1',
  browserId: 'b1',
  cdpEndpoint: 'ws://127.0.0.1:1/devtools/browser/x',
  targetId: 'T1',
  socketDir: '/tmp/sock',
  headedMode: 'headless',
  env: { AGENT_BROWSER_CDP: 'ws://127.0.0.1:1/devtools/browser/x', STAGEFLOW_CDP_TARGET: 'T1' },
};
const request: OpenStageSessionRequest = { runId: 'r1', stageId: 'work', attempt: 1, profile: 'p', leaseToken: 3, headed: false, allowDomains: [] };

describe('BrowserHostClient', () => {
  let server: Server;
  let reply: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  let client: BrowserHostClient;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => reply(req, res, body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new BrowserHostClient({ browserHostUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const answer = (status: number, body?: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body === undefined ? undefined : JSON.stringify(body));
  };

  it('posts the request to /internal/sessions and returns the session', async () => {
    let seen: { method?: string; url?: string; body?: unknown } = {};
    reply = (req, res, body) => {
      seen = { method: req.method, url: req.url, body: JSON.parse(body) };
      answer(201, session)(req, res);
    };
    await expect(client.open(request)).resolves.toEqual(session);
    expect(seen).toEqual({ method: 'POST', url: '/internal/sessions', body: request });
  });

  it.each([
    [422, 'browser_site_blocked', 'allow_domains touches blocked site example.test'],
    [409, 'lease_not_held', 'the lease token 3 is not the current grant'],
    [503, 'browser_host_starting', 'browser-host is still sweeping'],
  ])('turns a %i into an error naming its code %s', async (status, code, message) => {
    reply = (req, res) => answer(status, { code, message })(req, res);
    await expect(client.open(request)).rejects.toMatchObject({ code, status, message });
  });

  it('deletes a session by id and accepts one already gone', async () => {
    const urls: string[] = [];
    reply = (req, res) => {
      urls.push(`${req.method} ${req.url}`);
      answer(urls.length === 1 ? 204 : 404, urls.length === 1 ? undefined : { code: 'session_not_found', message: 'x' })(req, res);
    };
    await client.close('s1');
    await client.close('s1');
    expect(urls).toEqual(['DELETE /internal/sessions/s1', 'DELETE /internal/sessions/s1']);
  });

  it('posts an activity report to the session and turns a refusal into its code', async () => {
    const seen: Array<{ method?: string; url?: string; body: unknown }> = [];
    reply = (req, res, body) => {
      seen.push({ method: req.method, url: req.url, body: JSON.parse(body) });
      if (seen.length === 1) answer(204)(req, res);
      else answer(404, { code: 'allowlist_audit_not_found', message: 'no audit pending' })(req, res);
    };
    const report = { navigationHosts: ['localhost'] };
    await client.reportActivity('s1', report);
    await expect(client.reportActivity('s1', report)).rejects.toMatchObject({ code: 'allowlist_audit_not_found', status: 404 });
    expect(seen[0]).toEqual({ method: 'POST', url: '/internal/sessions/s1/activity', body: report });
  });

  it('names browser-host as unreachable when nothing answers', async () => {
    const dead = new BrowserHostClient({ browserHostUrl: 'http://127.0.0.1:1' });
    const error = await dead.open(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BrowserHostError);
    expect(error).toMatchObject({ code: 'browser_host_unavailable' });
  });
});

describe('sessionRequest', () => {
  const job = { runId: 'r1', stageId: 'work', attempt: 2 };
  const stage = (browser: object) =>
    ({ id: 'work', kind: 'run', command: 'true', env: {}, timeoutSeconds: 60, retries: 0, browser }) as never;

  it('passes the profile with the fencing token of the run\'s grant', () => {
    const grant = { scope: 'local', profile: 'p', runId: 'r1', token: 9 };
    expect(sessionRequest(job, stage({ profile: 'p', headed: true, allowDomains: ['a.test'] }), grant)).toEqual({
      ...job,
      profile: 'p',
      leaseToken: 9,
      headed: true,
      allowDomains: ['a.test'],
    });
  });

  it('asks for a throw-away browser without a profile, and refuses a profile stage without its grant', () => {
    expect(sessionRequest(job, stage({ headed: false, allowDomains: [] }))).toEqual({ ...job, headed: false, allowDomains: [] });
    expect(() => sessionRequest(job, stage({ profile: 'p', headed: false, allowDomains: [] }))).toThrow(/needs the lease/);
  });
});
