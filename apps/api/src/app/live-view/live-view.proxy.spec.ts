import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { createTestApp, wsBase, type TestApp } from '../../test/test-app';
import { WsTestClient } from '../../test/ws-client';

const TICKET = 'Tkt_0123456789abcdefghijABCDEFGHIJ-01234567';

/**
 * A stand-in relay: refuses `?ticket=bad` with 401 {code, message}, accepts anything
 * else, echoes text and binary frames, and records what each upgrade carried.
 */
async function startRelay(): Promise<{ server: Server; url: string; seen: IncomingMessage[]; close(): Promise<void> }> {
  const seen: IncomingMessage[] = [];
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    seen.push(req);
    if (req.url?.includes('ticket=bad')) {
      const body = JSON.stringify({ code: 'ticket_invalid', message: 'The ticket is unknown, used, expired or revoked.' });
      socket.end(`HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: 'ready', url: req.url?.split('?')[0] }));
      ws.send(Buffer.from([0xff, 0xd8, 0xff, 0xe0]));
      ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `echo:${String(data)}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Opens a raw WebSocket and collects what arrives. */
function open(url: string, headers: Record<string, string> = {}): Promise<{ ws: WebSocket; received: Array<string | Buffer> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const received: Array<string | Buffer> = [];
    ws.on('message', (data: Buffer, isBinary) => received.push(isBinary ? data : String(data)));
    ws.once('open', () => resolve({ ws, received }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += String(c)));
      res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body || '{}') })));
    });
    ws.once('error', reject);
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 3000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the live-view WebSocket through the api', () => {
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let t: TestApp;
  const sockets: WebSocket[] = [];

  beforeEach(async () => {
    relay = await startRelay();
  });
  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    await t?.app.close();
    await relay.close();
  });

  const boot = async (token?: string) => {
    t = await createTestApp({ listen: true, liveViewUrl: relay.url, token });
  };
  const viewUrl = (ticket = TICKET) => `${wsBase(t.app)}/api/runs/r1/stages/login/live-view?ticket=${ticket}`;

  it('forwards the upgrade to the relay and frames both ways, text and binary', async () => {
    await boot();
    const { ws, received } = await open(viewUrl());
    sockets.push(ws);
    await until(() => received.length >= 2, 'the relay\'s first messages');
    expect(JSON.parse(received[0] as string)).toEqual({ type: 'ready', url: '/api/runs/r1/stages/login/live-view' });
    expect(Buffer.isBuffer(received[1]) && [...(received[1] as Buffer)]).toEqual([0xff, 0xd8, 0xff, 0xe0]);
    ws.send(JSON.stringify({ type: 'reopen' }));
    ws.send(Buffer.from([1, 2, 3]));
    await until(() => received.length >= 4, 'the echoes');
    expect(received[2]).toBe('echo:{"type":"reopen"}');
    expect([...(received[3] as Buffer)]).toEqual([1, 2, 3]);
    // The relay got the path and the ticket as sent, and the handshake headers only.
    expect(relay.seen[0].url).toBe(`/api/runs/r1/stages/login/live-view?ticket=${TICKET}`);
  });

  it('passes the relay\'s refusal on as it is', async () => {
    await boot();
    await expect(open(viewUrl('bad'))).rejects.toMatchObject({ status: 401, body: { code: 'ticket_invalid' } });
  });

  it('needs no api token with a ticket, and forwards neither the token nor cookies', async () => {
    await boot('a-long-enough-token-1234');
    const { ws } = await open(viewUrl(), { Authorization: 'Bearer a-long-enough-token-1234', Cookie: 'session=1' });
    sockets.push(ws);
    const { ws: second } = await open(viewUrl());
    sockets.push(second);
    expect(relay.seen.map((r) => [r.headers.authorization, r.headers.cookie])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  it('keeps the loopback and same-origin rules when no token is configured', async () => {
    await boot();
    await expect(open(viewUrl(), { Origin: 'http://evil.example' })).rejects.toMatchObject({ status: 403, body: { code: 'origin_forbidden' } });
    await expect(open(viewUrl(), { Host: 'evil.example' })).rejects.toMatchObject({ status: 403, body: { code: 'host_forbidden' } });
    expect(relay.seen).toEqual([]);
  });

  it('answers a malformed id with 400, and 502 when the relay is down, saying what to check', async () => {
    await boot();
    await expect(open(`${wsBase(t.app)}/api/runs/r%201/stages/login/live-view?ticket=${TICKET}`)).rejects.toMatchObject({
      status: 400,
      body: { code: 'invalid_id' },
    });
    await relay.close();
    const refused = await open(viewUrl()).catch((error: { status: number; body: { code: string; message: string } }) => error);
    expect(refused).toMatchObject({ status: 502, body: { code: 'live_view_unreachable' } });
    expect((refused as { body: { message: string } }).body.message).toContain('STAGEFLOW_LIVE_VIEW_URL');
    // Logged by path, never with the ticket.
    expect(JSON.stringify(t.logger.entries)).not.toContain(TICKET);
    relay = await startRelay();
  });

  it('ends forwarded views when the api closes, so they never hold it up', async () => {
    await boot();
    const { ws } = await open(viewUrl());
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    await t.app.close();
    expect(await closed).toBe(1006);
    t = await createTestApp();
  });

  it('leaves the run-event WebSocket as it was', async () => {
    await boot();
    const client = await WsTestClient.connect(`${wsBase(t.app)}/api/ws`);
    client.send({ type: 'subscribe', run: 'missing' });
    expect((await client.waitForCount(1))[0]).toMatchObject({ type: 'error', code: 'run_not_found' });
    await client.close();
    await expect(open(`${wsBase(t.app)}/api/nothing-here`)).rejects.toBeDefined();
    expect(relay.seen).toEqual([]);
  });
});
