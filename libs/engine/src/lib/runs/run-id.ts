import { randomBytes } from 'node:crypto';

/** A new run id: time-ordered base36 milliseconds, then random hex (fits the job payload's id pattern). */
export function newRunId(nowMs: number): string {
  return `${nowMs.toString(36)}-${randomBytes(5).toString('hex')}`;
}
