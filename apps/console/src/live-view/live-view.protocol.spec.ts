import { parseLiveViewClientMessage } from '@stageflow/contracts';
import { ClickSequencer, keyMessage, textMessages, withModifiers } from './input-events';
import { liveViewSocketUrl, parseLiveViewMessage, parseTicket } from './live-view.protocol';

const RUN = { runId: 'r1', stageId: 'login', mode: 'interactive' as const };
const TICKET = 'A'.repeat(21) + '-_' + 'b'.repeat(20);

describe('the live-view protocol: relay → console', () => {
  it('reads every message type of the contract, keeping only its fields', () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { type: 'ready', mode: 'interactive', runId: 'r1', stageId: 'login', attempt: 1, url: 'http://127.0.0.1:9/login', dialogTimeoutSeconds: 60 },
        { type: 'ready', mode: 'interactive', runId: 'r1', stageId: 'login', attempt: 1, url: 'http://127.0.0.1:9/login', dialogTimeoutSeconds: 60 },
      ],
      [
        { type: 'frame-meta', deviceWidth: 1280, deviceHeight: 720, offsetTop: 0, pageScaleFactor: 1, scrollOffsetX: 0, scrollOffsetY: 40, extra: 1 },
        { type: 'frame-meta', deviceWidth: 1280, deviceHeight: 720, offsetTop: 0, pageScaleFactor: 1, scrollOffsetX: 0, scrollOffsetY: 40 },
      ],
      [{ type: 'url', url: 'https://example.com/login' }, { type: 'url', url: 'https://example.com/login' }],
      [{ type: 'popup', action: 'opened', url: 'https://idp.example/', depth: 1 }, { type: 'popup', action: 'opened', url: 'https://idp.example/', depth: 1 }],
      [
        { type: 'dialog', id: 3, kind: 'prompt', message: 'Code for <b>ada</b>?', defaultPrompt: '123', url: 'u', canAnswer: true, waitsFor: 'operator', autoAccepted: false, timeoutAt: '2030-01-01T00:00:00.000Z' },
        { type: 'dialog', id: 3, kind: 'prompt', message: 'Code for <b>ada</b>?', defaultPrompt: '123', url: 'u', canAnswer: true, waitsFor: 'operator', autoAccepted: false, timeoutAt: '2030-01-01T00:00:00.000Z' },
      ],
      [
        { type: 'dialog', id: 4, kind: 'alert', message: 'Saved.', url: 'u', canAnswer: false, waitsFor: 'nobody', autoAccepted: true },
        { type: 'dialog', id: 4, kind: 'alert', message: 'Saved.', url: 'u', canAnswer: false, waitsFor: 'nobody', autoAccepted: true },
      ],
      [
        { type: 'dialog-closed', id: 3, outcome: 'timed-out', message: 'The page dialog was dismissed after waiting too long.' },
        { type: 'dialog-closed', id: 3, outcome: 'timed-out', message: 'The page dialog was dismissed after waiting too long.' },
      ],
      [{ type: 'dialog-closed', id: 3, outcome: 'answered-elsewhere' }, { type: 'dialog-closed', id: 3, outcome: 'answered-elsewhere' }],
      [{ type: 'reopened', url: 'https://example.com/' }, { type: 'reopened', url: 'https://example.com/' }],
      [
        { type: 'ended', reason: 'gate-answered', message: 'The gate was answered, so this live view is closed.' },
        { type: 'ended', reason: 'gate-answered', message: 'The gate was answered, so this live view is closed.' },
      ],
      [{ type: 'error', code: 'input_refused', message: 'view-only' }, { type: 'error', code: 'input_refused', message: 'view-only' }],
    ];
    for (const [raw, parsed] of cases) expect(parseLiveViewMessage(JSON.stringify(raw))).toEqual(parsed);
  });

  it('refuses malformed messages and the earlier draft\'s shapes instead of guessing', () => {
    for (const bad of [
      'nope',
      '[]',
      '{"type":"frame-meta","deviceWidth":0,"deviceHeight":720,"offsetTop":0,"pageScaleFactor":1,"scrollOffsetX":0,"scrollOffsetY":0}',
      '{"type":"frame-meta","deviceWidth":1280,"deviceHeight":720,"offsetTop":0,"pageScaleFactor":1}',
      '{"type":"dialog","dialogType":"confirm","message":"x"}',
      '{"type":"dialog","id":1,"kind":"file","message":"x","url":"u","canAnswer":true,"waitsFor":"operator","autoAccepted":false}',
      '{"type":"dialog","id":1,"kind":"confirm","message":7,"url":"u","canAnswer":true,"waitsFor":"operator","autoAccepted":false}',
      '{"type":"dialog","id":0,"kind":"confirm","message":"x","url":"u","canAnswer":true,"waitsFor":"operator","autoAccepted":false}',
      '{"type":"dialog-closed","reason":"timeout"}',
      '{"type":"dialog-closed","id":1,"outcome":"gone"}',
      '{"type":"popup","following":true}',
      '{"type":"popup","action":"opened","url":"u","depth":-1}',
      '{"type":"ended","reason":"gate-answered"}',
      '{"type":"ready","mode":"admin","runId":"r","stageId":"s","attempt":1,"url":"u","dialogTimeoutSeconds":60}',
      '{"type":"url"}',
      '{"type":"mystery"}',
    ]) {
      expect({ bad, parsed: parseLiveViewMessage(bad) }).toEqual({ bad, parsed: undefined });
    }
  });
});

describe('the live-view protocol: the ticket', () => {
  const answer = { ticket: TICKET, mode: 'interactive', expiresAt: '2030-01-01T00:00:30Z', path: '/api/runs/r1/stages/login/live-view' };

  it('takes a ticket of the mode asked for, for the stage asked for, and opens the socket on this origin', () => {
    const ok = parseTicket(answer, RUN);
    expect(ok).toEqual(answer);
    expect(liveViewSocketUrl(ok as NonNullable<typeof ok>, { protocol: 'https:', host: 'host:3000' })).toBe(`wss://host:3000/api/runs/r1/stages/login/live-view?ticket=${TICKET}`);
    expect(liveViewSocketUrl(ok as NonNullable<typeof ok>, { protocol: 'http:', host: '127.0.0.1:3000' })).toMatch(/^ws:\/\/127\.0\.0\.1:3000\//);
  });

  it('refuses a ticket for another place, stage or mode, or not shaped like one', () => {
    for (const path of ['//evil.example/x', 'ws://evil.example/x', '/api/runs/r1/stages/other/live-view', '/api/runs/r1/stages/login/live-view?x=1', 'relative']) {
      expect(parseTicket({ ...answer, path }, RUN)).toBeUndefined();
    }
    expect(parseTicket(answer, { ...RUN, mode: 'view-only' })).toBeUndefined();
    expect(parseTicket({ ...answer, ticket: 'short' }, RUN)).toBeUndefined();
    expect(parseTicket({ ...answer, ticket: `${TICKET.slice(1)}/` }, RUN)).toBeUndefined();
    expect(parseTicket(null, RUN)).toBeUndefined();
  });
});

describe('the live-view protocol: console → relay', () => {
  /** Whatever the console sends must pass the relay's own parser. */
  const accepted = (message: unknown) => parseLiveViewClientMessage(JSON.stringify(message));

  it('sends clicks, keys, wheel and paste the relay accepts', () => {
    const sent: unknown[] = [];
    const clicks = new ClickSequencer((m) => sent.push(m), { setTimeout: () => 1, clearTimeout: () => undefined });
    clicks.click({ type: 'mouse', action: 'click', x: 0.5, y: 0.25, button: 'right' }, 0, 0);
    clicks.click(withModifiers({ type: 'mouse' as const, action: 'click' as const, x: 0, y: 1 }, { altKey: false, ctrlKey: true, metaKey: false, shiftKey: false }), 0, 0);
    clicks.click({ type: 'mouse', action: 'click', x: 0, y: 1 }, 1, 1);
    const messages = [
      ...sent,
      keyMessage({ key: 'Tab', altKey: false, ctrlKey: false, metaKey: false, shiftKey: true }),
      keyMessage({ key: 'é', altKey: false, ctrlKey: false, metaKey: false, shiftKey: false }),
      keyMessage({ key: 'a', altKey: false, ctrlKey: true, metaKey: false, shiftKey: false }),
      { type: 'wheel', x: 1, y: 0, deltaX: 0, deltaY: -10_000 },
      ...textMessages('x'.repeat(25_000)),
      { type: 'dialog', id: 3, action: 'accept', promptText: '456' },
      { type: 'reopen' },
    ];
    expect(sent).toEqual([
      { type: 'mouse', action: 'click', x: 0.5, y: 0.25, button: 'right' },
      { type: 'mouse', action: 'click', x: 0, y: 1, modifiers: ['Control'], clicks: 2 },
    ]);
    for (const message of messages) expect({ message, result: accepted(message) }).toMatchObject({ result: { ok: true } });
  });
});
