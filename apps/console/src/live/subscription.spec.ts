import type { RunEvent } from '../api/api.types';
import { acceptEvent, compareCursors, messageKey, noteSubscribed, parseServerMessage, subscribeMessage, type Subscription } from './subscription';

const event = (runId: string, seq: number): RunEvent => ({ seq, runId, type: 'stage.log', at: '2030-01-01T00:00:00.000Z', data: { stream: 'stdout', line: `l${seq}` } });

describe('resuming WebSocket subscriptions', () => {
  it('a run subscription resumes after the last event handed on, and drops what it already had', () => {
    const sub: Subscription = { kind: 'run', runId: 'r', after: 0 };
    expect(subscribeMessage(sub)).toEqual({ type: 'subscribe', run: 'r', after: 0 });
    const seen = [1, 2, 3].filter((seq) => acceptEvent(sub, { type: 'event', event: event('r', seq) }));
    expect(seen).toEqual([1, 2, 3]);
    // After a reconnect the server replays from `after`; an overlap is not handed on twice.
    expect(subscribeMessage(sub)).toEqual({ type: 'subscribe', run: 'r', after: 3 });
    expect(acceptEvent(sub, { type: 'event', event: event('r', 3) })).toBe(false);
    expect(acceptEvent(sub, { type: 'event', event: event('other', 4) })).toBe(false);
    expect(acceptEvent(sub, { type: 'event', event: event('r', 4) })).toBe(true);
  });

  it('"only new" learns its start from `subscribed`, so a reconnect before any event misses nothing', () => {
    const run: Subscription = { kind: 'run', runId: 'r' };
    expect(subscribeMessage(run)).toEqual({ type: 'subscribe', run: 'r' });
    noteSubscribed(run, { type: 'subscribed', run: 'r', after: 41 });
    expect(subscribeMessage(run)).toEqual({ type: 'subscribe', run: 'r', after: 41 });

    const all: Subscription = { kind: 'all' };
    noteSubscribed(all, { type: 'subscribed', all: true, after: '1700000000000-3' });
    expect(subscribeMessage(all)).toEqual({ type: 'subscribe', all: true, after: '1700000000000-3' });
    // An empty stream at subscription time: everything after it is everything kept.
    const empty: Subscription = { kind: 'all' };
    noteSubscribed(empty, { type: 'subscribed', all: true, after: null });
    expect(subscribeMessage(empty)).toEqual({ type: 'subscribe', all: true, after: '0' });
  });

  it('the all-runs subscription keeps the last cursor and drops events at or before it', () => {
    const all: Subscription = { kind: 'all', after: '100-0' };
    expect(acceptEvent(all, { type: 'event', event: event('a', 1), cursor: '100-1' })).toBe(true);
    expect(acceptEvent(all, { type: 'event', event: event('b', 1), cursor: '99-5' })).toBe(false);
    expect(acceptEvent(all, { type: 'event', event: event('b', 1), cursor: '100-1' })).toBe(false);
    expect(acceptEvent(all, { type: 'event', event: event('b', 2), cursor: '101-0' })).toBe(true);
    expect(subscribeMessage(all)).toEqual({ type: 'subscribe', all: true, after: '101-0' });
    expect(compareCursors('0', '1-0')).toBe(-1);
    expect(compareCursors('1700000000000-10', '1700000000000-9')).toBe(1);
  });

  it('routes server messages to their subscription', () => {
    expect(messageKey({ type: 'event', event: event('r', 1) })).toBe('run:r');
    expect(messageKey({ type: 'event', event: event('r', 1), cursor: '1-0' })).toBe('all');
    expect(messageKey({ type: 'error', code: 'run_not_found', message: 'x', run: 'r' })).toBe('run:r');
    expect(messageKey({ type: 'subscribed', all: true, after: null })).toBe('all');
  });

  it('checks every frame before acting on it', () => {
    expect(parseServerMessage('{"type":"event","event":{"seq":1,"runId":"r","type":"run.state","at":"t","data":{"state":"running"}}}')).toBeDefined();
    for (const bad of ['not json', '[]', '{"type":"event","event":{"seq":"1"}}', '{"type":"subscribed","run":"r","after":"1"}', '{"type":"surprise"}', '{"type":"error"}']) {
      expect(parseServerMessage(bad)).toBeUndefined();
    }
  });
});
