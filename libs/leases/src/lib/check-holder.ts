import { randomBytes } from 'node:crypto';
import type { RunLiveness } from './lease.types';

/**
 * A profile check ("Check now" in the console) holds a profile's lease while
 * its browser is open, but it is not a run: the engine does not know its id,
 * so a reclaim asking "is this run alive?" would hear "no" and take the lease
 * mid-check. Its holder id therefore carries its own deadline, and every
 * reclaim judges such a holder by that deadline instead of asking the engine:
 * alive until it expires, dead after, so a check whose process crashed cannot
 * keep the profile forever.
 *
 * Run ids are base36 milliseconds, `-`, hex (`newRunId`), never with `_`, so
 * `check_<deadline base36>_<hex>` cannot be taken for a run.
 */
const CHECK_HOLDER = /^check_([0-9a-z]{1,11})_([0-9a-f]{8,32})$/;

/** A new holder id for a profile check that ends by `expiresAtMs` (ms since the epoch). */
export function checkHolderId(expiresAtMs: number, random: string = randomBytes(6).toString('hex')): string {
  return `check_${Math.ceil(expiresAtMs).toString(36)}_${random}`;
}

/** The deadline (ms since the epoch) of a check holder id; undefined for a run id or anything else. */
export function checkHolderExpiry(holderId: string): number | undefined {
  const m = CHECK_HOLDER.exec(holderId);
  if (!m) return undefined;
  const ms = parseInt(m[1], 36);
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** True for the holder id of a profile check (see {@link checkHolderId}). */
export function isCheckHolder(holderId: string): boolean {
  return checkHolderExpiry(holderId) !== undefined;
}

/**
 * `isRunAlive` that also understands check holders: alive until their
 * deadline (by `now`), without asking the engine, which does not know them.
 */
export function withCheckHolders(isRunAlive: RunLiveness, now: () => number = Date.now): RunLiveness {
  return (id) => {
    const expiry = checkHolderExpiry(id);
    return expiry === undefined ? isRunAlive(id) : Promise.resolve(now() < expiry);
  };
}
