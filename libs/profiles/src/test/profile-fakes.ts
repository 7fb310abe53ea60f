import type { AuditRecordInput } from '@stageflow/audit';
import { nodeProfileFs, type ProfileFs } from '../lib/profile-fs.adapter';
import type { ProfileAuditTrail, ProfileLeaseReader } from '../lib/profile.service';

type LeaseState = Awaited<ReturnType<ProfileLeaseReader['describe']>>;

/** Lease states set by the test, shaped like `ProfileLeases.describe` (token and ticket included, as Redis has them). */
export class FakeLeases implements ProfileLeaseReader {
  private readonly states = new Map<string, LeaseState & { holder?: { token: number } }>();
  readonly described: string[] = [];
  failWith?: Error;

  hold(profile: string, runId: string, since = '2030-01-01T00:00:00.000Z'): this {
    const state = this.stateOf(profile);
    state.holder = { runId, since, token: 41 };
    return this;
  }

  queue(profile: string, runId: string, since = '2030-01-01T00:01:00.000Z'): this {
    const state = this.stateOf(profile);
    state.waiters.push({ runId, since, ticket: 42 + state.waiters.length } as LeaseState['waiters'][number]);
    return this;
  }

  free(profile: string): this {
    this.states.delete(profile);
    return this;
  }

  async describe(scope: string, profile: string): Promise<LeaseState> {
    this.described.push(`${scope}/${profile}`);
    if (this.failWith) throw this.failWith;
    return structuredClone(this.states.get(profile) ?? { waiters: [] });
  }

  private stateOf(profile: string): LeaseState & { holder?: { token: number } } {
    let state = this.states.get(profile);
    if (!state) this.states.set(profile, (state = { waiters: [] }));
    return state;
  }
}

/** Keeps appended records; set `failWith` to make appends fail. */
export class MemoryAuditTrail implements ProfileAuditTrail {
  readonly records: AuditRecordInput[] = [];
  failWith?: Error;

  async append(record: AuditRecordInput): Promise<unknown> {
    if (this.failWith) throw this.failWith;
    this.records.push(record);
    return record;
  }
}

/** The real file system, recording every path it is asked to touch. */
export function recordingFs(): { fs: ProfileFs; paths: string[] } {
  const paths: string[] = [];
  const fs = Object.fromEntries(
    Object.entries(nodeProfileFs).map(([op, fn]) => [
      op,
      (...args: [string, ...unknown[]]) => {
        paths.push(args[0]);
        if (op === 'rename') paths.push(args[1] as string);
        return (fn as (...a: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as ProfileFs;
  return { fs, paths };
}
