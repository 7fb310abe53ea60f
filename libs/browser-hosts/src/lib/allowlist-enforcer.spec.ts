import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { AllowlistEnforcer, type AllowlistBlock } from './allowlist-enforcer';

interface Command {
  id: number;
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** Every fake browser of the current test, stopped after it even when the test failed (an open socket keeps Jest alive). */
const servers = new Set<WebSocketServer>();
afterEach(async () => {
  await Promise.all([...servers].map((wss) => stopServer(wss)));
});

function stopServer(wss: WebSocketServer): Promise<void> {
  servers.delete(wss);
  for (const client of wss.clients) client.terminate();
  return new Promise((resolve) => wss.close(() => resolve()));
}

/** A scripted browser endpoint: records commands, answers them, can fail chosen ones. */
async function fakeBrowser(failing: (cmd: Command) => boolean = () => false) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  servers.add(wss);
  await new Promise((resolve) => wss.once('listening', resolve));
  const received: Command[] = [];
  let socket: WebSocket | undefined;
  wss.on('connection', (ws) => {
    socket = ws;
    ws.on('message', (data) => {
      const cmd = JSON.parse(String(data)) as Command;
      received.push(cmd);
      const reply = failing(cmd)
        ? { id: cmd.id, error: { code: -32000, message: 'Not allowed' }, sessionId: cmd.sessionId }
        : { id: cmd.id, result: cmd.method === 'Target.getTargets' ? { targetInfos: [] } : {}, sessionId: cmd.sessionId };
      ws.send(JSON.stringify(reply));
    });
  });
  return {
    endpoint: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/devtools/browser/x`,
    received,
    emit: (method: string, params: unknown, sessionId?: string) =>
      socket?.send(JSON.stringify({ method, params, sessionId })),
    drop: () => socket?.terminate(),
    stop: () => stopServer(wss),
    // Generous: a loaded CI machine can take seconds to deliver a few local messages.
    until: async (pred: () => boolean) => {
      for (let i = 0; i < 1000 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
      if (!pred()) throw new Error('condition not reached');
    },
  };
}

const page = (targetId: string, type = 'page') => ({ targetId, type, title: '', url: 'about:blank', attached: true });

describe('AllowlistEnforcer (scripted browser)', () => {
  it('pauses new targets browser-wide, sets up interception, then resumes them', async () => {
    const browser = await fakeBrowser();
    const enforcer = await AllowlistEnforcer.start(browser.endpoint, { allowDomains: ['allowed.test'] });
    expect(browser.received.map((c) => c.method)).toEqual([
      'Target.setDiscoverTargets',
      'Target.setAutoAttach',
      'Target.getTargets',
    ]);
    expect(browser.received[1].params).toEqual({ autoAttach: true, waitForDebuggerOnStart: true, flatten: true });

    browser.emit('Target.attachedToTarget', { sessionId: 'S1', targetInfo: page('T1'), waitingForDebugger: true });
    await browser.until(() => browser.received.some((c) => c.method === 'Runtime.runIfWaitingForDebugger'));
    const onS1 = browser.received.filter((c) => c.sessionId === 'S1').map((c) => c.method);
    expect(onS1).toEqual(['Fetch.enable', 'Target.setAutoAttach', 'Runtime.runIfWaitingForDebugger']);
    await enforcer.stop();
    await browser.stop();
  });

  it('always resumes a paused target, even when setting it up fails', async () => {
    const browser = await fakeBrowser((cmd) => cmd.method === 'Fetch.enable');
    const enforcer = await AllowlistEnforcer.start(browser.endpoint, { allowDomains: ['allowed.test'] });
    browser.emit('Target.attachedToTarget', {
      sessionId: 'S2',
      targetInfo: page('W2', 'service_worker'),
      waitingForDebugger: true,
    });
    await browser.until(() => browser.received.some((c) => c.method === 'Runtime.runIfWaitingForDebugger'));
    expect(enforcer.setupFailures).toEqual([expect.stringContaining('service_worker W2')]);
    await enforcer.stop();
    await browser.stop();
  });

  it('continues allowed requests, fails others with BlockedByClient, and reports each host once', async () => {
    const browser = await fakeBrowser();
    const blocks: AllowlistBlock[] = [];
    const enforcer = await AllowlistEnforcer.start(browser.endpoint, {
      allowDomains: ['allowed.test'],
      onBlocked: (b) => blocks.push(b),
    });
    browser.emit('Target.attachedToTarget', { sessionId: 'S1', targetInfo: page('T1'), waitingForDebugger: false });
    const paused = (requestId: string, url: string, resourceType = 'Document') =>
      browser.emit('Fetch.requestPaused', { requestId, request: { url }, resourceType }, 'S1');
    paused('r1', 'http://allowed.test/');
    paused('r2', 'http://blocked.test/a?token=x', 'Image');
    paused('r3', 'http://blocked.test/b');
    paused('r4', 'data:text/plain,hi');
    await browser.until(() => browser.received.filter((c) => c.method.startsWith('Fetch.') && c.params['requestId']).length === 4);
    const answers = Object.fromEntries(
      browser.received.filter((c) => c.params['requestId']).map((c) => [c.params['requestId'], [c.method, c.params['errorReason']]]),
    );
    expect(answers).toEqual({
      r1: ['Fetch.continueRequest', undefined],
      r2: ['Fetch.failRequest', 'BlockedByClient'],
      r3: ['Fetch.failRequest', 'BlockedByClient'],
      r4: ['Fetch.continueRequest', undefined],
    });
    expect(blocks).toEqual([{ host: 'blocked.test', url: 'http://blocked.test/a', resourceType: 'Image', targetId: 'T1' }]);
    expect(enforcer.blocks).toEqual(blocks);
    await enforcer.stop();
    await browser.stop();
  });

  it('says when it is lost (connection gone while not stopped)', async () => {
    const browser = await fakeBrowser();
    const onLost = jest.fn();
    const enforcer = await AllowlistEnforcer.start(browser.endpoint, { allowDomains: ['allowed.test'], onLost });
    browser.drop();
    await browser.until(() => onLost.mock.calls.length === 1);
    await enforcer.stop();
    await browser.stop();
  });

  it('refuses a bad allow_domains entry before touching the browser', async () => {
    await expect(
      AllowlistEnforcer.start('ws://127.0.0.1:1/devtools/browser/x', { allowDomains: ['https://x.test'] }),
    ).rejects.toMatchObject({ code: 'allow_domain_invalid' });
  });
});
