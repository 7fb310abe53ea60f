import { ContractViolationError } from '@stageflow/contracts';
import { readAcquireReply, readHoldForCheckReply, readReclaimReply, readReleaseReply, readState } from './lease-replies';

const ms = 1735689600000;
const iso = '2025-01-01T00:00:00.000Z';

describe('script replies', () => {
  it('reads a profile check\'s hold or the holder that refuses it, and nothing else', () => {
    expect(readHoldForCheckReply(['granted', 5, ms], 'local', 'work', 'check_x_0123abcd', ms + 1000)).toEqual({
      status: 'granted',
      grant: { scope: 'local', profile: 'work', runId: 'check_x_0123abcd', token: 5 },
      expiresAt: '2025-01-01T00:00:01.000Z',
    });
    expect(readHoldForCheckReply(['busy', 'r0', 4, ms], 'local', 'work', 'check_x_0123abcd', ms)).toEqual({
      status: 'busy',
      holder: { runId: 'r0', token: 4, since: iso },
    });
    for (const bad of [['queued', 1, 2, 'r0', 4, ms, ms], ['busy', '', 4, ms], ['granted', -1, ms], 'OK']) {
      expect(() => readHoldForCheckReply(bad, 'local', 'work', 'check_x_0123abcd', ms)).toThrow(ContractViolationError);
    }
  });

  it('reads a grant and a place in the queue', () => {
    expect(readAcquireReply(['granted', 4, ms], 'local', 'work', 'r1')).toEqual({
      status: 'granted',
      grant: { scope: 'local', profile: 'work', runId: 'r1', token: 4 },
    });
    expect(readAcquireReply(['queued', 2, 9, 'r0', 4, ms, ms], 'local', 'work', 'r1')).toEqual({
      status: 'queued',
      position: 2,
      ticket: 9,
      holder: { runId: 'r0', token: 4, since: iso },
      since: iso,
    });
  });

  it('reads releases with and without a next holder', () => {
    expect(readReleaseReply([0])).toEqual({ released: false });
    expect(readReleaseReply([1])).toEqual({ released: true });
    expect(readReleaseReply([1, 'r2', 5, ms])).toEqual({ released: true, next: { runId: 'r2', token: 5, since: iso } });
  });

  it('reads a reclaim with the removed waiters', () => {
    expect(readReclaimReply([1, 'r3', 6, ms, 'r1', 'r2'])).toEqual({
      released: true,
      holder: { runId: 'r3', token: 6, since: iso },
      removed: ['r1', 'r2'],
    });
    expect(readReclaimReply([0, '', 0, 0])).toEqual({ released: false, removed: [] });
  });

  it.each([null, 'OK', [], ['granted'], ['queued', 1, 2, '', 3, 4, 5], ['granted', -1, ms], ['other', 1, 2]])(
    'refuses the acquire reply %j',
    (reply) => {
      expect(() => readAcquireReply(reply, 'local', 'work', 'r1')).toThrow(ContractViolationError);
    },
  );

  it('refuses malformed release and reclaim replies', () => {
    expect(() => readReleaseReply([2])).toThrow(ContractViolationError);
    expect(() => readReleaseReply([1, 'r2'])).toThrow(ContractViolationError);
    expect(() => readReclaimReply([1, 'r3'])).toThrow(ContractViolationError);
  });
});

describe('readState', () => {
  it('builds holder and waiters in queue order from either reply mapping', () => {
    const expected = {
      scope: 'local',
      profile: 'work',
      holder: { runId: 'a', token: 3, since: iso },
      waiters: [
        { runId: 'c', ticket: 4, since: iso },
        { runId: 'b', ticket: 5, since: iso },
      ],
    };
    const since = { c: String(ms), b: String(ms) };
    expect(readState('local', 'work', ['a', '3', String(ms)], ['c', '4', 'b', '5'], since)).toEqual(expected);
    expect(
      readState('local', 'work', ['a', '3', String(ms)], [['c', 4], ['b', 5]], ['c', String(ms), 'b', String(ms)]),
    ).toEqual(expected);
  });

  it('has no holder when the lease is free', () => {
    expect(readState('local', 'work', [null, null, null], [], {})).toEqual({ scope: 'local', profile: 'work', waiters: [] });
  });

  it('refuses a holder without a token', () => {
    expect(() => readState('local', 'work', ['a', null, null], [], {})).toThrow(ContractViolationError);
  });
});
