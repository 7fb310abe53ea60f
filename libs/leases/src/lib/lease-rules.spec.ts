import fc from 'fast-check';
import { ContractViolationError } from '@stageflow/contracts';
import type { LeaseState } from './lease.types';
import {
  GrantLedger,
  indexMember,
  isEmptyPlan,
  parseIndexMember,
  parseLeaseEvent,
  planReclaim,
  runsToCheck,
  waitingReason,
} from './lease-rules';

const at = '2025-01-01T00:00:00.000Z';

function state(holder: string | undefined, waiters: string[]): LeaseState {
  return {
    scope: 'local',
    profile: 'work',
    holder: holder ? { runId: holder, token: 7, since: at } : undefined,
    waiters: waiters.map((runId, i) => ({ runId, since: at, ticket: 10 + i })),
  };
}

describe('planReclaim', () => {
  it('releases a dead holder with its token and drops dead waiters', () => {
    const alive = new Map([
      ['a', false],
      ['b', false],
      ['c', true],
    ]);
    expect(planReclaim(state('a', ['b', 'c']), alive)).toEqual({ deadHolder: { runId: 'a', token: 7 }, deadWaiters: ['b'] });
  });

  it('leaves a live holder alone but still drops dead waiters', () => {
    const alive = new Map([
      ['a', true],
      ['b', false],
    ]);
    expect(planReclaim(state('a', ['b']), alive)).toEqual({ deadHolder: undefined, deadWaiters: ['b'] });
  });

  it('treats a run of unknown liveness as alive', () => {
    const plan = planReclaim(state('a', ['b']), new Map());
    expect(isEmptyPlan(plan)).toBe(true);
  });

  it('only ever removes runs known to be dead', () => {
    fc.assert(
      fc.property(
        fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: undefined }),
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e')),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.boolean()),
        (holder, waiters, liveness) => {
          const alive = new Map(Object.entries(liveness));
          const plan = planReclaim(state(holder, waiters), alive);
          if (plan.deadHolder) expect(alive.get(plan.deadHolder.runId)).toBe(false);
          for (const w of plan.deadWaiters) expect(alive.get(w)).toBe(false);
          expect(plan.deadWaiters.filter((w) => (waiters as string[]).includes(w))).toEqual(plan.deadWaiters);
        },
      ),
    );
  });

  it('asks about the holder first, then the waiters in queue order', () => {
    expect(runsToCheck(state('a', ['c', 'b']))).toEqual(['a', 'c', 'b']);
    expect(runsToCheck(state(undefined, []))).toEqual([]);
  });
});

describe('waitingReason', () => {
  it('names the profile and the run holding it', () => {
    expect(waitingReason('work', { runId: 'r-42' })).toBe('waiting for browser profile work held by run r-42');
    expect(waitingReason('work')).toBe('waiting for browser profile work');
  });
});

describe('lease index members', () => {
  it('round-trips every valid scope and profile', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);
    fc.assert(
      fc.property(name, name, (scope, profile) => {
        expect(parseIndexMember(indexMember(scope, profile))).toEqual({ scope, profile });
      }),
    );
  });

  it('rejects members that are not scope/profile', () => {
    for (const m of ['', 'local', 'a/b/c', '../x', 'local/..']) expect(parseIndexMember(m)).toBeUndefined();
  });
});

describe('parseLeaseEvent', () => {
  const good = { type: 'granted', scope: 'local', profile: 'work', runId: 'r1', token: 3, since: 1735689600000, via: 'handoff' };

  it('reads a grant published by the scripts', () => {
    expect(parseLeaseEvent(JSON.stringify(good))).toEqual({
      type: 'granted',
      grant: { scope: 'local', profile: 'work', runId: 'r1', token: 3 },
      via: 'handoff',
      since: 1735689600000,
    });
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['another type', JSON.stringify({ ...good, type: 'released' })],
    ['a bad profile', JSON.stringify({ ...good, profile: '../x' })],
    ['a bad run id', JSON.stringify({ ...good, runId: 'a b' })],
    ['a fractional token', JSON.stringify({ ...good, token: 1.5 })],
    ['a token as a string', JSON.stringify({ ...good, token: '3' })],
    ['an unknown via', JSON.stringify({ ...good, via: 'magic' })],
  ])('refuses %s', (_what, raw) => {
    expect(() => parseLeaseEvent(raw)).toThrow(ContractViolationError);
  });
});

describe('GrantLedger', () => {
  it('accepts each grant once and ignores older ones', () => {
    const ledger = new GrantLedger();
    expect(ledger.record('local', 'work', 'a', 5)).toBe(true);
    expect(ledger.record('local', 'work', 'a', 5)).toBe(false);
    expect(ledger.record('local', 'work', 'b', 4)).toBe(false);
    expect(ledger.record('local', 'other', 'b', 4)).toBe(true);
    expect(ledger.record('local', 'work', 'b', 9)).toBe(true);
  });

  it('tells whether a run was granted after it drew a ticket', () => {
    const ledger = new GrantLedger();
    ledger.record('local', 'work', 'b', 9);
    expect(ledger.grantedSince('local', 'work', 'b', 8)).toBe(true);
    expect(ledger.grantedSince('local', 'work', 'b', 9)).toBe(false);
    expect(ledger.grantedSince('local', 'work', 'c', 1)).toBe(false);
  });
});
