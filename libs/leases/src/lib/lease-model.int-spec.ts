import fc from 'fast-check';
import { LeaseHarness, livenessExcept } from '../test/lease-harness';
import { LeaseModel } from '../test/lease-model';

const scope = 'local';
const profile = 'work';
const run = fc.constantFrom('run-a', 'run-b', 'run-c', 'run-d', 'run-e');

type Op =
  | { kind: 'acquire' | 'release' | 'withdraw' | 'releaseRun'; runId: string }
  | { kind: 'reclaim'; dead: string[] };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('acquire' as const), runId: run }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('release' as const), runId: run }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('withdraw' as const), runId: run }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('releaseRun' as const), runId: run }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reclaim' as const), dead: fc.uniqueArray(run, { maxLength: 3 }) }) },
);

/**
 * Random operation sequences on Redis and on the plain model of the rules
 * must agree on every reply and on the whole state after every step.
 */
describe('ProfileLeases against the model of the lease rules (real Redis)', () => {
  it('agrees with the model on random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const h = new LeaseHarness();
        try {
          const leases = h.leases();
          const model = new LeaseModel();
          for (const step of ops) {
            switch (step.kind) {
              case 'acquire': {
                const got = await leases.acquire(scope, profile, step.runId);
                const want = model.acquire(step.runId);
                expect(
                  got.status === 'granted'
                    ? { status: 'granted', token: got.grant.token }
                    : { status: 'queued', position: got.position, ticket: got.ticket, holder: got.holder.runId },
                ).toEqual(want);
                break;
              }
              case 'release':
                expect(await leases.release(scope, profile, step.runId)).toBe(model.release(step.runId));
                break;
              case 'withdraw':
                expect(await leases.withdraw(scope, profile, step.runId)).toBe(model.withdraw(step.runId));
                break;
              case 'releaseRun': {
                const got = await leases.releaseRun(step.runId);
                const released = model.release(step.runId);
                const withdrawn = model.withdraw(step.runId);
                expect(got).toEqual(released || withdrawn ? [{ scope, profile, released, withdrawn }] : []);
                break;
              }
              case 'reclaim':
                await leases.reclaim(scope, profile, livenessExcept(new Set(step.dead)));
                model.reclaim(new Set(step.dead));
                break;
            }
            const state = await leases.describe(scope, profile);
            expect({
              holder: state.holder && { runId: state.holder.runId, token: state.holder.token },
              queue: state.waiters.map((w) => ({ runId: w.runId, ticket: w.ticket })),
            }).toEqual({ holder: model.holder, queue: model.queue });
          }
        } finally {
          await h.dispose();
        }
      }),
      { numRuns: 40 },
    );
  });
});
