import fc from 'fast-check';
import { parseClientMessage, WsProtocolError } from './ws-message';

const parse = (value: unknown): ReturnType<typeof parseClientMessage> => parseClientMessage(JSON.stringify(value));

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof WsProtocolError) return error.code;
    throw error;
  }
  throw new Error('expected a WsProtocolError');
}

describe('parseClientMessage', () => {
  it('reads run subscriptions with and without after', () => {
    expect(parse({ type: 'subscribe', run: 'run-1', after: 0 })).toEqual({
      type: 'subscribe',
      target: { kind: 'run', runId: 'run-1' },
      after: 0,
    });
    expect(parse({ type: 'subscribe', run: 'run-1' })).toEqual({ type: 'subscribe', target: { kind: 'run', runId: 'run-1' } });
  });

  it('reads all-runs subscriptions with a cursor', () => {
    expect(parse({ type: 'subscribe', all: true, after: '1712345678901-0' })).toEqual({
      type: 'subscribe',
      target: { kind: 'all' },
      after: '1712345678901-0',
    });
  });

  it('reads unsubscribe', () => {
    expect(parse({ type: 'unsubscribe', run: 'r' })).toEqual({ type: 'unsubscribe', target: { kind: 'run', runId: 'r' } });
    expect(parse({ type: 'unsubscribe', all: true })).toEqual({ type: 'unsubscribe', target: { kind: 'all' } });
  });

  it.each([
    ['not JSON', '{type:subscribe}', 'invalid_json'],
    ['a JSON array', '[1]', 'invalid_message'],
    ['a JSON string', '"subscribe"', 'invalid_message'],
    ['null', 'null', 'invalid_message'],
  ])('refuses %s', (_what, data, code) => {
    expect(codeOf(() => parseClientMessage(data))).toBe(code);
  });

  it.each([
    ['an unknown type', { type: 'ping' }],
    ['no type', { run: 'r' }],
    ['an unknown field', { type: 'subscribe', run: 'r', foo: 1 }],
    ['"after" on unsubscribe', { type: 'unsubscribe', run: 'r', after: 1 }],
    ['both run and all', { type: 'subscribe', run: 'r', all: true }],
    ['neither run nor all', { type: 'subscribe' }],
    ['all: false', { type: 'subscribe', all: false }],
    ['a run id with a slash', { type: 'subscribe', run: 'a/b' }],
    ['a run id too long', { type: 'subscribe', run: 'r'.repeat(129) }],
    ['a numeric run id', { type: 'subscribe', run: 5 }],
    ['a negative after', { type: 'subscribe', run: 'r', after: -1 }],
    ['a fractional after', { type: 'subscribe', run: 'r', after: 1.5 }],
    ['a string after on a run', { type: 'subscribe', run: 'r', after: '3' }],
    ['a numeric after on all', { type: 'subscribe', all: true, after: 3 }],
    ['a cursor with spaces', { type: 'subscribe', all: true, after: '1 2' }],
  ])('refuses %s as invalid_message', (_what, message) => {
    expect(codeOf(() => parse(message))).toBe('invalid_message');
  });

  it('only ever throws WsProtocolError, whatever arrives', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v))), (data) => {
        try {
          parseClientMessage(data);
        } catch (error) {
          expect(error).toBeInstanceOf(WsProtocolError);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never lets an unknown field through on a message it accepts', () => {
    fc.assert(
      fc.property(
        fc.record({ type: fc.constantFrom('subscribe', 'unsubscribe'), run: fc.constant('r1') }),
        fc.string({ minLength: 1 }).filter((k) => !['type', 'run', 'all', 'after', '__proto__'].includes(k)),
        fc.jsonValue(),
        (base, key, value) => {
          expect(codeOf(() => parse({ ...base, [key]: value }))).toBe('invalid_message');
        },
      ),
      { numRuns: 200 },
    );
  });
});
