import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { browserVersion } from './browser-version';
import { CdpConnection } from './cdp-connection';

interface Command {
  id: number;
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** A fake browser endpoint: answers by a handler, can push events, records what it got. */
class FakeBrowser {
  readonly received: Command[] = [];
  socket?: WebSocket;
  handler: (cmd: Command) => unknown = () => ({});
  private constructor(private readonly wss: WebSocketServer) {
    wss.on('connection', (socket) => {
      this.socket = socket;
      socket.on('message', (data) => {
        const cmd = JSON.parse(String(data)) as Command;
        this.received.push(cmd);
        const answer = this.handler(cmd);
        if (answer === NO_ANSWER) return;
        if (answer instanceof Error) {
          socket.send(JSON.stringify({ id: cmd.id, error: { code: -32602, message: answer.message }, sessionId: cmd.sessionId }));
        } else {
          socket.send(JSON.stringify({ id: cmd.id, result: answer, sessionId: cmd.sessionId }));
        }
      });
    });
  }
  static async start(): Promise<FakeBrowser> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => wss.once('listening', resolve));
    return new FakeBrowser(wss);
  }
  get endpoint(): string {
    return `ws://localhost:${(this.wss.address() as AddressInfo).port}/devtools/browser/x`;
  }
  emit(method: string, params: unknown, sessionId?: string): void {
    this.socket?.send(JSON.stringify({ method, params, sessionId }));
  }
  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise((resolve) => this.wss.close(resolve));
  }
}
const NO_ANSWER = Symbol('no answer');

describe('CdpConnection', () => {
  let browser: FakeBrowser;
  let cdp: CdpConnection;
  beforeEach(async () => {
    browser = await FakeBrowser.start();
    cdp = await CdpConnection.connect(browser.endpoint, { callTimeoutMs: 200 });
  });
  afterEach(async () => {
    await cdp.close();
    await browser.stop();
  });

  it('connects to 127.0.0.1 even when handed localhost', () => {
    expect(cdp.endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\//);
  });

  it('matches answers to calls by id, on the browser target and on a flattened session', async () => {
    browser.handler = (cmd) => ({ echo: cmd.method, session: cmd.sessionId ?? null });
    const [a, b] = await Promise.all([
      cdp.send('Browser.getVersion'),
      cdp.send('Runtime.evaluate', { expression: '1' }, { sessionId: 'S1' }),
    ]);
    expect(a).toEqual({ echo: 'Browser.getVersion', session: null });
    expect(b).toEqual({ echo: 'Runtime.evaluate', session: 'S1' });
    expect(browser.received[1]).toMatchObject({ sessionId: 'S1', params: { expression: '1' } });
  });

  it('times out a call the browser never answers (a page blocked by a dialog) and ignores the late answer', async () => {
    browser.handler = (cmd) => (cmd.method === 'Runtime.evaluate' ? NO_ANSWER : {});
    await expect(cdp.send('Runtime.evaluate', {}, { timeoutMs: 50 })).rejects.toMatchObject({ code: 'cdp_timeout' });
    browser.socket?.send(JSON.stringify({ id: 1, result: { late: true } }));
    await expect(cdp.send('Browser.getVersion')).resolves.toEqual({});
  });

  it('turns a protocol error into cdp_protocol_error with Chrome’s message', async () => {
    browser.handler = () => new Error('No target with given id found');
    await expect(cdp.send('Target.attachToTarget', { targetId: 'nope' })).rejects.toMatchObject({
      code: 'cdp_protocol_error',
      details: { method: 'Target.attachToTarget', cdpMessage: 'No target with given id found' },
    });
  });

  it('treats closing a tab that is already gone as closed', async () => {
    browser.handler = () => new Error('No target with given id found');
    await expect(cdp.closeTab('gone')).resolves.toBeUndefined();
  });

  it('fails pending calls with cdp_closed when the browser goes away, and refuses new ones', async () => {
    browser.handler = () => NO_ANSWER;
    const pending = cdp.send('Page.navigate', { url: 'about:blank' }, { timeoutMs: 5000 });
    browser.socket?.terminate();
    await expect(pending).rejects.toMatchObject({ code: 'cdp_closed' });
    await cdp.closed;
    expect(cdp.isClosed).toBe(true);
    await expect(cdp.send('Browser.getVersion')).rejects.toMatchObject({ code: 'cdp_closed' });
  });

  it('delivers events with their session id, survives a throwing listener, and unsubscribes', async () => {
    const seen: Array<[unknown, string | undefined]> = [];
    cdp.on('Target.targetCreated', () => {
      throw new Error('bad listener');
    });
    const off = cdp.on('Target.targetCreated', (params, sessionId) => seen.push([params, sessionId]));
    browser.emit('Target.targetCreated', { targetInfo: { targetId: 'T1' } });
    const next = cdp.waitForEvent<{ frameId: string }>('Page.frameNavigated', { sessionId: 'S2' });
    browser.emit('Page.frameNavigated', { frameId: 'wrong-session' }, 'S1');
    browser.emit('Page.frameNavigated', { frameId: 'F2' }, 'S2');
    await expect(next).resolves.toEqual({ frameId: 'F2' });
    off();
    browser.emit('Target.targetCreated', { targetInfo: { targetId: 'T2' } });
    await cdp.send('Browser.getVersion');
    expect(seen).toEqual([[{ targetInfo: { targetId: 'T1' } }, undefined]]);
  });

  it('uses the Target domain for tabs', async () => {
    let closed = false;
    browser.handler = (cmd) => {
      switch (cmd.method) {
        case 'Target.createTarget':
          return { targetId: 'T9' };
        case 'Target.attachToTarget':
          return { sessionId: 'S9' };
        case 'Target.closeTarget':
          closed = true;
          return { success: true };
        case 'Target.getTargets':
          return {
            targetInfos: closed ? [] : [
              { targetId: 'T9', type: 'page', url: 'about:blank', title: '', attached: true },
              { targetId: 'W1', type: 'service_worker', url: 'http://a/sw.js', title: '', attached: false },
            ],
          };
        default:
          return {};
      }
    };
    expect(await cdp.createTab()).toBe('T9');
    expect(await cdp.attachToTab('T9')).toBe('S9');
    expect((await cdp.listPages()).map((t) => t.targetId)).toEqual(['T9']);
    await cdp.closeTab('T9');
    expect(browser.received.map((c) => [c.method, c.params])).toEqual([
      ['Target.createTarget', { url: 'about:blank' }],
      ['Target.attachToTarget', { targetId: 'T9', flatten: true }],
      ['Target.getTargets', {}],
      ['Target.closeTarget', { targetId: 'T9' }],
      ['Target.getTargets', {}],
    ]);
  });

  it('closeTab waits until the tab is really gone, and times out when it stays', async () => {
    let listed = 3;
    browser.handler = (cmd) =>
      cmd.method === 'Target.getTargets'
        ? { targetInfos: listed-- > 0 ? [{ targetId: 'T1', type: 'page', url: '', title: '', attached: false }] : [] }
        : {};
    await cdp.closeTab('T1');
    expect(browser.received.filter((c) => c.method === 'Target.getTargets')).toHaveLength(4);

    browser.handler = (cmd) =>
      cmd.method === 'Target.getTargets'
        ? { targetInfos: [{ targetId: 'T2', type: 'page', url: '', title: '', attached: false }] }
        : {};
    await expect(cdp.closeTab('T2', { timeoutMs: 150 })).rejects.toMatchObject({ code: 'cdp_timeout' });
  });
});

describe('CdpConnection.connect', () => {
  it('reports a closed port as cdp_unreachable', async () => {
    const port = await freePort();
    await expect(CdpConnection.connect(`ws://127.0.0.1:${port}/devtools/browser/x`)).rejects.toMatchObject({
      code: 'cdp_unreachable',
    });
  });

  it('reports an HTTP server that is not CDP as cdp_unreachable', async () => {
    const server = await listen(createServer((_req, res) => res.writeHead(404).end()));
    const port = (server.address() as AddressInfo).port;
    await expect(CdpConnection.connect(`ws://127.0.0.1:${port}/devtools/browser/x`)).rejects.toMatchObject({
      code: 'cdp_unreachable',
    });
    server.close();
  });
});

describe('browserVersion', () => {
  it('reads /json/version from 127.0.0.1', async () => {
    const server = await listen(
      createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            Browser: 'Chrome/156.0',
            'Protocol-Version': '1.3',
            'User-Agent': `Mozilla/5.0 host=${req.headers.host}`,
            webSocketDebuggerUrl: 'ws://127.0.0.1/devtools/browser/x',
          }),
        );
      }),
    );
    const port = (server.address() as AddressInfo).port;
    await expect(browserVersion(port)).resolves.toEqual({
      product: 'Chrome/156.0',
      protocolVersion: '1.3',
      userAgent: `Mozilla/5.0 host=127.0.0.1:${port}`,
      webSocketDebuggerUrl: 'ws://127.0.0.1/devtools/browser/x',
    });
    server.close();
  });

  it('times out a server that never answers', async () => {
    const server = await listen(createServer(() => undefined));
    const port = (server.address() as AddressInfo).port;
    await expect(browserVersion(port, { timeoutMs: 100 })).rejects.toMatchObject({ code: 'cdp_timeout' });
    server.closeAllConnections();
    server.close();
  });

  it('reports nothing listening as cdp_unreachable', async () => {
    await expect(browserVersion(await freePort())).rejects.toMatchObject({ code: 'cdp_unreachable' });
  });
});

function listen(server: Server): Promise<Server> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function freePort(): Promise<number> {
  const server = await listen(createServer());
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
