import { mayHoldLease } from './lease-liveness.rule';

describe('mayHoldLease', () => {
  const now = Date.parse('2026-11-29T12:00:00.000Z');

  it('holds for an open run, and not for a run that does not exist', () => {
    expect(mayHoldLease('running', undefined, now)).toBe(true);
    expect(mayHoldLease('waiting', undefined, now)).toBe(true);
    expect(mayHoldLease(undefined, undefined, now)).toBe(false);
  });

  it('keeps an ended run alive while browser-host may still be closing its Chrome, then lets it go', () => {
    expect(mayHoldLease('success', '2026-11-29T11:59:50.000Z', now)).toBe(true);
    expect(mayHoldLease('cancelled', '2026-11-29T11:59:00.000Z', now)).toBe(false);
    expect(mayHoldLease('abandoned', '2026-11-29T10:00:00.000Z', now)).toBe(false);
  });

  it('counts an ended run without an end time as alive (unknown is alive)', () => {
    expect(mayHoldLease('failed', undefined, now)).toBe(true);
  });
});
