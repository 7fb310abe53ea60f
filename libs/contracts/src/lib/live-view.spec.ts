import { sessionRecordFromHash, sessionRecordToHash, type SessionRecord } from './browser-session-record';
import { parseReopenedStageSession, reopenSessionRoute } from './browser-sessions';
import { ContractViolationError } from './errors';
import { RedisKeys } from './keys';
import {
  isLiveViewKey,
  LIVE_VIEW_LIMITS,
  LIVE_VIEW_TICKET_PATTERN,
  liveViewPath,
  parseLiveViewClientMessage,
  parseLiveViewPath,
  parseLiveViewTicketRecord,
} from './live-view';

const parse = (value: unknown) => parseLiveViewClientMessage(JSON.stringify(value));

describe('parseLiveViewClientMessage', () => {
  it.each([
    [{ type: 'mouse', action: 'click', x: 0.5, y: 0.25 }],
    [{ type: 'mouse', action: 'click', x: 0, y: 1, button: 'right' }],
    [{ type: 'mouse', action: 'click', x: 0.1, y: 0.1, clicks: 2, modifiers: ['Shift', 'Control'] }],
    [{ type: 'mouse', action: 'down', x: 0.1, y: 0.1, button: 'left', clicks: 3 }],
    [{ type: 'mouse', action: 'move', x: 0.3, y: 0.7 }],
    [{ type: 'wheel', x: 0.5, y: 0.5, deltaX: 0, deltaY: -120 }],
    [{ type: 'key', action: 'press', key: 'Enter' }],
    [{ type: 'key', action: 'down', key: 'Shift' }],
    [{ type: 'key', action: 'press', key: 'a', modifiers: ['Control'] }],
    [{ type: 'key', action: 'press', key: 'é' }],
    [{ type: 'key', action: 'press', key: '😀' }],
    [{ type: 'key', action: 'press', key: ' ' }],
    [{ type: 'text', text: 'hunter2' }],
    [{ type: 'dialog', id: 3, action: 'accept', promptText: '' }],
    [{ type: 'dialog', id: 1, action: 'dismiss' }],
    [{ type: 'reopen' }],
  ])('accepts %j', (message) => {
    expect(parse(message)).toEqual({ ok: true, message });
  });

  it.each([
    [{ type: 'mouse', action: 'click', x: 1.5, y: 0 }, '"x" must be a number from 0 to 1'],
    [{ type: 'mouse', action: 'click', x: 0.5 }, '"y" must be a number from 0 to 1'],
    [{ type: 'mouse', action: 'click', x: '0.5', y: 0.5 }, '"x" must be a number'],
    [{ type: 'mouse', action: 'tap', x: 0.5, y: 0.5 }, '"action" must be click, down, up or move'],
    [{ type: 'mouse', action: 'click', x: 0.5, y: 0.5, button: 'back' }, '"button" must be left, middle or right'],
    [{ type: 'mouse', action: 'click', x: 0.5, y: 0.5, clicks: 3 }, '"clicks" must be an integer from 1 to 2'],
    [{ type: 'mouse', action: 'click', x: 0.5, y: 0.5, modifiers: ['Hyper'] }, '"modifiers" must be a list'],
    [{ type: 'mouse', action: 'click', x: 0.5, y: 0.5, extra: 1 }, 'unknown field "extra"'],
    [{ type: 'wheel', x: 0.5, y: 0.5, deltaX: 0, deltaY: 1e9 }, '"deltaY" must be a number'],
    [{ type: 'key', action: 'press', key: 'F5' }, '"key" must be one printable character'],
    [{ type: 'key', action: 'press', key: 'ab' }, '"key" must be one printable character'],
    [{ type: 'key', action: 'press', key: '\u0007' }, '"key" must be one printable character'],
    [{ type: 'key', action: 'hold', key: 'a' }, '"action" must be down, up or press'],
    [{ type: 'text', text: '' }, '"text" must be a string of 1 to'],
    [{ type: 'text', text: 'x'.repeat(LIVE_VIEW_LIMITS.maxTextChars + 1) }, 'send a longer paste as several messages'],
    [{ type: 'dialog', id: 0, action: 'accept' }, '"id" must be the positive integer id'],
    [{ type: 'dialog', id: 1, action: 'ok' }, '"action" must be accept or dismiss'],
    [{ type: 'dialog', id: 1, action: 'accept', promptText: 5 }, '"promptText" must be a string'],
    [{ type: 'reopen', url: 'http://elsewhere' }, 'unknown field "url"'],
    [{ type: 'navigate', url: 'http://x' }, '"type" must be one of mouse, wheel, key, text, dialog, reopen'],
    [{ type: '__proto__' }, '"type" must be one of'],
    [[{ type: 'reopen' }], 'expected one JSON object'],
    ['reopen', 'expected one JSON object'],
  ])('refuses %j: %s', (message, problem) => {
    const result = parse(message);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.code).toBe('invalid_message');
      expect(result.message).toContain(problem);
    }
  });

  it('refuses what is not JSON, and binary frames', () => {
    expect(parseLiveViewClientMessage('{"type":')).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(parseLiveViewClientMessage(Buffer.from('{"type":"reopen"}'), true)).toMatchObject({
      ok: false,
      code: 'invalid_message',
      message: expect.stringContaining('binary frames are not accepted'),
    });
  });

  it('reads a Buffer text frame', () => {
    expect(parseLiveViewClientMessage(Buffer.from('{"type":"reopen"}'))).toEqual({ ok: true, message: { type: 'reopen' } });
  });

  it('does not echo an attacker-sized field name', () => {
    const result = parse({ type: 'reopen', ['k'.repeat(5000)]: 1 });
    expect(!result.ok && result.message.length).toBeLessThan(200);
  });
});

describe('isLiveViewKey', () => {
  it('takes named keys and single printable characters only', () => {
    expect(isLiveViewKey('ArrowLeft')).toBe(true);
    expect(isLiveViewKey('Z')).toBe(true);
    expect(isLiveViewKey('')).toBe(false);
    expect(isLiveViewKey('\n')).toBe(false);
    expect(isLiveViewKey('\ud800')).toBe(false);
    expect(isLiveViewKey(7)).toBe(false);
  });
});

describe('live-view paths and tickets', () => {
  it('builds and reads the stable gate path, refusing malformed ids', () => {
    expect(liveViewPath('r1', 'login')).toBe('/api/runs/r1/stages/login/live-view');
    expect(parseLiveViewPath('/api/runs/r1/stages/login/live-view')).toEqual({ runId: 'r1', stageId: 'login' });
    expect(parseLiveViewPath('/api/runs/r1/stages/login/live-view/x')).toBeUndefined();
    expect(parseLiveViewPath('/api/runs/r%201/stages/login/live-view')).toBeUndefined();
    expect(parseLiveViewPath('/api/ws')).toBeUndefined();
  });

  it('knows a ticket by its shape: 43 base64url characters (256 bits)', () => {
    expect(LIVE_VIEW_TICKET_PATTERN.test('A'.repeat(43))).toBe(true);
    expect(LIVE_VIEW_TICKET_PATTERN.test('A'.repeat(42))).toBe(false);
    expect(LIVE_VIEW_TICKET_PATTERN.test(`${'A'.repeat(42)}=`)).toBe(false);
  });

  const record = {
    runId: 'r1',
    stageId: 'login',
    attempt: 2,
    sessionId: 'sf-r1-login-2',
    mode: 'view-only',
    issuedAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-01T00:01:00.000Z',
  };

  it('validates a stored ticket record', () => {
    expect(parseLiveViewTicketRecord(record)).toEqual(record);
    expect(() => parseLiveViewTicketRecord({ ...record, mode: 'admin' })).toThrow('mode must be one of interactive, view-only');
    expect(() => parseLiveViewTicketRecord({ ...record, attempt: 0 })).toThrow(ContractViolationError);
    expect(() => parseLiveViewTicketRecord({ ...record, expiresAt: 'soon' })).toThrow('expiresAt must be an ISO 8601 time');
    expect(() => parseLiveViewTicketRecord({ ...record, extra: 1 })).toThrow('unknown field "extra"');
  });

  it('keys tickets by digest under the prefix', () => {
    const keys = new RedisKeys('t:');
    expect(keys.liveViewTicket('ab12')).toBe('t:live-view-ticket:ab12');
    expect(keys.runLiveViewTickets('r1')).toBe('t:run:r1:live-view-tickets');
  });
});

describe('the reopen route', () => {
  it('names the session and validates the answer', () => {
    expect(reopenSessionRoute('sf-r-s-1')).toBe('/internal/sessions/sf-r-s-1/reopen');
    expect(parseReopenedStageSession({ targetId: 'ABC123', url: 'http://127.0.0.1/' })).toEqual({ targetId: 'ABC123', url: 'http://127.0.0.1/' });
    expect(() => parseReopenedStageSession({ targetId: '../x', url: '' })).toThrow('targetId must be a CDP target id');
  });
});

describe('the stage session record codec', () => {
  const session: SessionRecord = {
    sessionId: 'sf-r1-s-1',
    hostId: 'local',
    runId: 'r1',
    stageId: 's',
    attempt: 1,
    kind: 'shared',
    browserId: 'sb-1',
    scope: 'local',
    profile: 'work',
    targetId: 'T1',
    cdpEndpoint: 'ws://127.0.0.1:9222/devtools/browser/x',
    socketDir: '/tmp/sf/r1',
    headedMode: 'headless',
    openedAt: '2026-01-01T00:00:00.000Z',
    blocked: [],
  };

  it('round-trips through a Redis hash and refuses a malformed one', () => {
    expect(sessionRecordFromHash(sessionRecordToHash(session))).toEqual(session);
    expect(sessionRecordFromHash({ ...sessionRecordToHash(session), cdpEndpoint: 'ws://10.0.0.1:1/x' })).toBeUndefined();
    expect(sessionRecordFromHash({})).toBeUndefined();
  });
});
