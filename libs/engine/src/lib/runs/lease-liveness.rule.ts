import { isTerminalRunState, RunState } from '@stageflow/contracts';

/**
 * How long an ended run still counts as holding its browser-profile lease:
 * browser-host closes the run's Chrome gracefully (up to 10 s, then SIGKILL)
 * and only then releases, so that the next run never starts Chrome on a
 * profile the old one is still writing. A waiting run must not reclaim the
 * lease inside that window.
 */
export const LEASE_RELEASE_GRACE_MS = 30_000;

/**
 * Whether a run may still hold or wait for a lease, for `ProfileLeases`'
 * reclaim-while-waiting: an open run, or one that ended less than `graceMs`
 * ago. A run that does not exist holds nothing.
 */
export function mayHoldLease(
  state: RunState | undefined,
  endedAt: string | undefined,
  nowMs: number,
  graceMs = LEASE_RELEASE_GRACE_MS,
): boolean {
  if (!state) return false;
  if (!isTerminalRunState(state)) return true;
  const ended = endedAt ? Date.parse(endedAt) : NaN;
  // An ended run without a readable end time: unknown counts as alive (docs/leases.md).
  if (Number.isNaN(ended)) return true;
  return nowMs - ended < graceMs;
}
