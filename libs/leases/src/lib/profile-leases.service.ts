import { Logger, OnApplicationShutdown } from '@nestjs/common';
import { ConflictError, RedisKeys, StageflowError } from '@stageflow/contracts';
import Redis from 'ioredis';
import { assertProfileRef, assertRunId, assertToken } from './lease-input';
import { checkHolderExpiry, checkHolderId, withCheckHolders } from './check-holder';
import { readAcquireReply, readHoldForCheckReply, readReclaimReply, readReleaseReply, readState } from './lease-replies';
import {
  GrantLedger,
  indexMember,
  isEmptyPlan,
  parseIndexMember,
  parseLeaseEvent,
  planReclaim,
  runsToCheck,
} from './lease-rules';
import { LEASE_SCRIPTS } from './lease.scripts';
import type {
  AcquireOutcome,
  CheckHoldOutcome,
  GrantVia,
  LeaseGrant,
  LeaseState,
  ReclaimOutcome,
  RunLeaseRelease,
  RunLiveness,
} from './lease.types';

/** Where the service gets its Redis connections: a URL, or a factory of new ioredis clients. */
export type RedisConnector = string | (() => Redis);

export interface ProfileLeasesOptions {
  /**
   * Redis URL, or a factory called once for the command connection and once
   * more for the subscriber (on first wait or listener). The service owns every
   * client it gets and quits it in {@link ProfileLeases.close}.
   */
  redis: RedisConnector;
  keys: RedisKeys;
  /**
   * When set, a run of this process that waits for a profile (queued by
   * {@link ProfileLeases.acquire} or in {@link ProfileLeases.waitForGrant})
   * reclaims the lease from dead runs: once after queueing and whenever the
   * lease changes hands. @defaultValue none (no reclaim while waiting)
   */
  isRunAlive?: RunLiveness;
}

/** Called for every grant this process sees on the lease channel (all profiles, all runs). */
export type GrantListener = (grant: LeaseGrant, via: GrantVia) => void;

interface ProfileRunRef {
  scope: string;
  profile: string;
  runId: string;
}

interface Wait {
  resolve(grant: LeaseGrant): void;
  reject(err: Error): void;
}

/**
 * A reclaim may hand the lease to a waiter that queued after its snapshot; it
 * then checks that holder too. Each round acts only on runs known dead, so a
 * few rounds settle it; the bound only stops a pathological churn.
 */
const MAX_RECLAIM_ROUNDS = 8;

function refKey(ref: ProfileRunRef): string {
  return `${indexMember(ref.scope, ref.profile)}/${ref.runId}`;
}

/**
 * Browser-profile leases on one Redis: one run holds a profile from the first
 * stage that needs it until the run ends, the others wait in a FIFO and are
 * woken by the release that hands them the lease. See docs/leases.md.
 */
export class ProfileLeases implements OnApplicationShutdown {
  private readonly log = new Logger(ProfileLeases.name);
  private readonly keys: RedisKeys;
  private readonly redis: Redis;
  private subscriber?: Redis;
  private subscribing?: Promise<void>;
  private subscribedOnce = false;
  private readonly listeners = new Set<GrantListener>();
  /** waitForGrant calls in this process, by scope/profile/run. */
  private readonly waits = new Map<string, { ref: ProfileRunRef; waits: Set<Wait> }>();
  /** Runs this process queued with acquire(): re-checked after (re)subscribing so no grant is missed. */
  private readonly pending = new Map<string, ProfileRunRef>();
  private readonly ledger = new GrantLedger();
  private readonly reclaiming = new Map<string, { again: boolean }>();
  private readonly reachable = new Map<string, boolean>();
  /** Re-reclaims due when a check holding a profile this process waits for passes its deadline. */
  private readonly checkDeadlines = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly options: ProfileLeasesOptions) {
    this.keys = options.keys;
    this.redis = this.connect('commands');
  }

  /**
   * Takes the profile for the run, or queues the run behind the holder.
   * Idempotent: the holder gets the same grant back (stages of one run share
   * the lease), a queued run keeps its place. A run that arrives while others
   * wait goes to the back, even if the lease is free at that instant.
   *
   * When queued, the grant arrives later on {@link onGranted} (register the
   * listener before acquiring) or through {@link waitForGrant}.
   */
  async acquire(scope: string, profile: string, runId: string): Promise<AcquireOutcome> {
    this.check(scope, profile, runId);
    const outcome = await this.acquireOnce(scope, profile, runId);
    const ref = { scope, profile, runId };
    if (outcome.status === 'granted') this.pending.delete(refKey(ref));
    // The grant may have reached the channel before this reply: then it is not pending any more.
    else if (!this.ledger.grantedSince(scope, profile, runId, outcome.ticket)) {
      this.pending.set(refKey(ref), ref);
      this.reclaimWhileWaiting(scope, profile);
    }
    return outcome;
  }

  /**
   * Resolves with the run's grant: at once if it holds the profile or it is
   * free with nobody waiting, else when a release (or reclaim) hands it over.
   * No polling: the wait subscribes to the lease channel first, then acquires,
   * so a grant made in between is not lost. Aborting the signal stops waiting
   * (`lease_wait_aborted`) but keeps the run queued: a cancelled run calls
   * {@link withdraw} or {@link releaseRun}.
   */
  async waitForGrant(scope: string, profile: string, runId: string, signal?: AbortSignal): Promise<LeaseGrant> {
    this.check(scope, profile, runId);
    if (signal?.aborted) throw this.aborted(profile, runId, signal);
    try {
      await this.ensureSubscribed();
    } catch (err) {
      throw this.closed ? this.closedError() : err;
    }
    this.assertOpen();
    const ref = { scope, profile, runId };
    const key = refKey(ref);
    return new Promise<LeaseGrant>((resolve, reject) => {
      let entry = this.waits.get(key);
      if (!entry) {
        entry = { ref, waits: new Set() };
        this.waits.set(key, entry);
      }
      const waits = entry.waits;
      let settled = false;
      const settle = () => {
        settled = true;
        waits.delete(wait);
        if (waits.size === 0 && this.waits.get(key)?.waits === waits) this.waits.delete(key);
        signal?.removeEventListener('abort', onAbort);
      };
      const wait: Wait = {
        resolve: (grant) => {
          if (settled) return;
          settle();
          resolve(grant);
        },
        reject: (err) => {
          if (settled) return;
          settle();
          reject(err);
        },
      };
      const onAbort = () => wait.reject(this.aborted(profile, runId, signal));
      waits.add(wait);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.acquireOnce(scope, profile, runId).then(
        (outcome) => {
          if (outcome.status === 'granted') wait.resolve(outcome.grant);
          else this.reclaimWhileWaiting(scope, profile);
        },
        (err: Error) => wait.reject(this.closed ? this.closedError() : err),
      );
    });
  }

  /**
   * Registers a listener for every grant published on the lease channel (the
   * engine parks a waiting stage and re-enqueues it from here). Resolves once
   * the subscription is live, after re-checking the runs this process queued,
   * with a function that removes the listener. Every process with a listener
   * hears every grant: act idempotently.
   */
  async onGranted(listener: GrantListener): Promise<() => void> {
    this.assertOpen();
    this.listeners.add(listener);
    try {
      await this.ensureSubscribed();
      await this.recheck();
    } catch (err) {
      this.listeners.delete(listener);
      throw err;
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Takes the profile for a profile check (not a run) if it is free and
   * nobody waits; never queues. The grant's `runId` is a check holder id
   * that carries its deadline (`now + ttlMs`): every reclaim treats the check
   * as alive until then and as dead after, so a crashed check frees the
   * profile at the next reclaim, and runs waiting meanwhile reclaim again
   * at the deadline. Release it with {@link release} and the grant's `runId`.
   */
  async holdForCheck(scope: string, profile: string, ttlMs: number): Promise<CheckHoldOutcome> {
    if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
      throw new StageflowError('invalid_check_ttl', `A profile check's lease TTL must be a positive whole number of ms; got ${ttlMs}.`, 500);
    }
    const first = await this.tryHoldForCheck(scope, profile, ttlMs);
    const expiry = first.status === 'busy' ? checkHolderExpiry(first.holder.runId) : undefined;
    if (expiry === undefined || expiry > Date.now()) return first;
    // An earlier check died past its deadline and no run came to reclaim it: take it back
    // (runs count as alive here: only the expired check is judged), then try once more.
    await this.reclaim(scope, profile, async () => true);
    return this.tryHoldForCheck(scope, profile, ttlMs);
  }

  private async tryHoldForCheck(scope: string, profile: string, ttlMs: number): Promise<CheckHoldOutcome> {
    const expiresAt = Date.now() + ttlMs;
    const holderId = checkHolderId(expiresAt);
    this.check(scope, profile, holderId);
    const reply = await LEASE_SCRIPTS.holdForCheck.run(this.redis, this.scriptKeys(scope, profile), [
      ...this.scriptArgs(scope, profile),
      holderId,
    ]);
    return readHoldForCheckReply(reply, scope, profile, holderId, expiresAt);
  }

  /**
   * Releases the profile if `runId` holds it and hands it, in the same
   * script, to the first run in the queue (published on the lease channel).
   * Resolves true when it released, false when the run did not hold it.
   */
  async release(scope: string, profile: string, runId: string): Promise<boolean> {
    this.check(scope, profile, runId);
    this.pending.delete(refKey({ scope, profile, runId }));
    const reply = await LEASE_SCRIPTS.release.run(this.redis, this.scriptKeys(scope, profile), [
      ...this.scriptArgs(scope, profile),
      runId,
      '',
      'handoff',
    ]);
    return readReleaseReply(reply).released;
  }

  /** Takes a waiting run out of the queue (run cancelled while waiting). Resolves true when it was queued. */
  async withdraw(scope: string, profile: string, runId: string): Promise<boolean> {
    this.check(scope, profile, runId);
    this.pending.delete(refKey({ scope, profile, runId }));
    const reply = await LEASE_SCRIPTS.withdraw.run(this.redis, this.scriptKeys(scope, profile), [
      ...this.scriptArgs(scope, profile),
      runId,
    ]);
    return reply === 1;
  }

  /**
   * Lets go of everything a run has: releases each lease it holds and leaves
   * each queue it is in. For run teardown, which must not depend on the stage
   * worker knowing which profiles the run touched. Resolves with what changed.
   */
  async releaseRun(runId: string): Promise<RunLeaseRelease[]> {
    assertRunId(runId);
    this.assertOpen();
    const refs = await this.indexedProfiles();
    const changes = await Promise.all(
      refs.map(async ({ scope, profile }) => {
        const [released, withdrawn] = await Promise.all([
          this.release(scope, profile, runId),
          this.withdraw(scope, profile, runId),
        ]);
        return { scope, profile, released, withdrawn };
      }),
    );
    return changes.filter((c) => c.released || c.withdrawn);
  }

  /**
   * True while `runId` holds the profile under `token`. A browser host checks
   * it before handing out a browser: a stale token (released, handed over,
   * reclaimed) is refused even if the same run holds a newer grant.
   */
  async isCurrent(scope: string, profile: string, runId: string, token: number): Promise<boolean> {
    this.check(scope, profile, runId);
    assertToken(token);
    const [holder, held] = await this.redis.hmget(this.keys.profileLease(scope, profile), 'runId', 'token');
    return holder === runId && held === String(token);
  }

  /** Like {@link isCurrent}, but throws `lease_not_held` (409) when the grant is not current. */
  async assertCurrent(scope: string, profile: string, runId: string, token: number): Promise<void> {
    if (await this.isCurrent(scope, profile, runId, token)) return;
    throw new ConflictError(
      'lease_not_held',
      `Run ${runId} no longer holds browser profile ${profile} (lease token ${token} is not current): the run ended or its lease was reclaimed. Start the stage again to wait for the profile.`,
      { scope, profile, runId, token },
    );
  }

  /** Who holds the profile and who waits, first in line first (one consistent snapshot). */
  async describe(scope: string, profile: string): Promise<LeaseState> {
    assertProfileRef(scope, profile);
    this.assertOpen();
    const replies = await this.redis
      .multi()
      .hmget(this.keys.profileLease(scope, profile), 'runId', 'token', 'since')
      .zrange(this.keys.profileLeaseQueue(scope, profile), '0', '-1', 'WITHSCORES')
      .hgetall(this.keys.profileLeaseWaitingSince(scope, profile))
      .exec();
    if (!replies) throw new StageflowError('lease_redis_failed', 'Redis aborted the lease read; try again.', 503);
    for (const [err] of replies) if (err) throw err;
    const [lease, queue, since] = replies.map(([, value]) => value);
    return readState(scope, profile, lease, queue, since);
  }

  /**
   * Releases the lease if its holder is not alive (finished or gone) and hands
   * it to the next live waiter; dead waiters are taken out of the queue. Safe
   * against the holder's own release: the script releases only the holder and
   * token it judged dead. A run whose liveness is unknown counts as alive.
   */
  async reclaim(scope: string, profile: string, isRunAlive: RunLiveness): Promise<ReclaimOutcome> {
    assertProfileRef(scope, profile);
    this.assertOpen();
    // Profile checks hold leases under ids the engine does not know: judged by their deadline.
    const liveness = withCheckHolders(isRunAlive);
    const alive = new Map<string, boolean>();
    const outcome: ReclaimOutcome = { scope, profile, removedWaiters: [] };
    for (let round = 0; round < MAX_RECLAIM_ROUNDS; round++) {
      const state = await this.describe(scope, profile);
      const unknown = runsToCheck(state).filter((id) => !alive.has(id));
      const answers = await Promise.all(unknown.map((id) => liveness(id)));
      unknown.forEach((id, i) => alive.set(id, answers[i]));
      const plan = planReclaim(state, alive);
      if (isEmptyPlan(plan)) {
        outcome.holder = state.holder;
        return outcome;
      }
      const reply = readReclaimReply(
        await LEASE_SCRIPTS.reclaim.run(this.redis, this.scriptKeys(scope, profile), [
          ...this.scriptArgs(scope, profile),
          plan.deadHolder?.runId ?? '',
          plan.deadHolder?.token ?? 0,
          ...plan.deadWaiters,
        ]),
      );
      if (reply.released && plan.deadHolder) outcome.releasedHolder = plan.deadHolder;
      outcome.removedWaiters.push(...reply.removed);
      outcome.holder = reply.holder;
      if (!reply.holder || alive.get(reply.holder.runId) === true) return outcome;
    }
    return outcome;
  }

  /**
   * {@link reclaim} over every lease with a holder or waiters (browser-host
   * start). Resolves with the leases it changed; throws `lease_reclaim_failed`
   * after trying all of them if any failed.
   */
  async reclaimAll(isRunAlive: RunLiveness): Promise<ReclaimOutcome[]> {
    this.assertOpen();
    const refs = await this.indexedProfiles();
    const results = await Promise.allSettled(refs.map((r) => this.reclaim(r.scope, r.profile, isRunAlive)));
    const failures = results.flatMap((r, i) =>
      r.status === 'rejected' ? [{ ...refs[i], message: String((r.reason as Error)?.message ?? r.reason) }] : [],
    );
    if (failures.length) {
      throw new StageflowError(
        'lease_reclaim_failed',
        `Could not reclaim ${failures.length} of ${refs.length} browser profile leases (${failures.map((f) => `${f.scope}/${f.profile}: ${f.message}`).join('; ')}); they are reclaimed again by the runs waiting for them or at the next start.`,
        500,
        { failures },
      );
    }
    return results
      .flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      .filter((o) => o.releasedHolder || o.removedWaiters.length > 0);
  }

  /** Quits both connections; pending waits reject with `leases_closed` and listeners are dropped. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = this.closedError();
    for (const { waits } of [...this.waits.values()]) for (const wait of [...waits]) wait.reject(err);
    this.listeners.clear();
    this.pending.clear();
    for (const timer of this.checkDeadlines) clearTimeout(timer);
    this.checkDeadlines.clear();
    const clients = [this.subscriber, this.redis].filter((c): c is Redis => !!c);
    await Promise.all(
      clients.map(async (client) => {
        // QUIT waits for the connection; a client that is not ready would hold shutdown until it reconnects.
        if (client.status !== 'ready') return client.disconnect();
        await client.quit().catch(() => client.disconnect());
      }),
    );
  }

  /** Nest shutdown hook. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  private check(scope: string, profile: string, runId: string): void {
    assertProfileRef(scope, profile);
    assertRunId(runId);
    this.assertOpen();
  }

  private assertOpen(): void {
    if (this.closed) throw this.closedError();
  }

  private closedError(): StageflowError {
    return new StageflowError(
      'leases_closed',
      'The lease service is shutting down; waits for browser profiles stopped and resume when the stage is retried.',
      503,
    );
  }

  private aborted(profile: string, runId: string, signal?: AbortSignal): StageflowError {
    const why = signal?.reason instanceof Error ? `: ${signal.reason.message}` : '';
    return new StageflowError(
      'lease_wait_aborted',
      `Run ${runId} stopped waiting for browser profile ${profile}${why}. The run is still queued until it is withdrawn or ends.`,
      409,
    );
  }

  private async acquireOnce(scope: string, profile: string, runId: string): Promise<AcquireOutcome> {
    const reply = await LEASE_SCRIPTS.acquire.run(this.redis, this.scriptKeys(scope, profile), [
      ...this.scriptArgs(scope, profile),
      runId,
    ]);
    return readAcquireReply(reply, scope, profile, runId);
  }

  private scriptKeys(scope: string, profile: string): string[] {
    return [
      this.keys.profileLease(scope, profile),
      this.keys.profileLeaseQueue(scope, profile),
      this.keys.profileLeaseWaitingSince(scope, profile),
      this.keys.leaseFence(),
      this.keys.leaseIndex(),
    ];
  }

  private scriptArgs(scope: string, profile: string): string[] {
    return [indexMember(scope, profile), this.keys.leaseChannel(), scope, profile];
  }

  private async indexedProfiles(): Promise<{ scope: string; profile: string }[]> {
    const members = await this.redis.smembers(this.keys.leaseIndex());
    return members.flatMap((m) => {
      const ref = parseIndexMember(m);
      if (!ref) this.log.warn(`Ignoring malformed lease index entry ${JSON.stringify(m)}`);
      return ref ? [ref] : [];
    });
  }

  private connect(role: 'commands' | 'subscriber'): Redis {
    const { redis } = this.options;
    const client = typeof redis === 'string' ? new Redis(redis) : redis();
    // Without an 'error' listener ioredis prints every failed reconnect; log the transitions only.
    client.on('error', (err: Error) => this.transition(role, false, err.message));
    client.on('ready', () => this.transition(role, true));
    return client;
  }

  private transition(role: string, up: boolean, why?: string): void {
    const was = this.reachable.get(role);
    this.reachable.set(role, up);
    if (was === up || (was === undefined && up)) return;
    if (up) this.log.log(`Lease ${role} connection to Redis is back`);
    else this.log.warn(`Lease ${role} connection to Redis failed (${why}); retrying`);
  }

  private ensureSubscribed(): Promise<void> {
    if (this.subscribing) return this.subscribing;
    let sub = this.subscriber;
    if (!sub) {
      sub = this.connect('subscriber');
      this.subscriber = sub;
      sub.on('message', (channel: string, message: string) => this.onMessage(channel, message));
      // Grants published while the subscriber was away are lost to it: after a reconnect, look again.
      sub.on('ready', () => {
        if (this.subscribedOnce && !this.closed) void this.resume();
      });
    }
    const subscribing = sub.subscribe(this.keys.leaseChannel()).then(
      () => {
        this.subscribedOnce = true;
      },
      (err: Error) => {
        if (this.subscribing === subscribing) this.subscribing = undefined;
        throw err;
      },
    );
    this.subscribing = subscribing;
    return subscribing;
  }

  private async resume(): Promise<void> {
    try {
      await this.subscriber?.subscribe(this.keys.leaseChannel());
      await this.recheck();
    } catch (err) {
      if (!this.closed) this.log.warn(`Re-checking lease waits after a reconnect failed: ${(err as Error).message}`);
    }
  }

  /** Looks up, once, whether a run this process waits for was granted while it was not listening. */
  private async recheck(): Promise<void> {
    const refs = new Map<string, ProfileRunRef>(this.pending);
    for (const [key, entry] of this.waits) refs.set(key, entry.ref);
    await Promise.all(
      [...refs].map(async ([key, ref]) => {
        const [holder, token] = await this.redis.hmget(this.keys.profileLease(ref.scope, ref.profile), 'runId', 'token');
        if (holder === ref.runId && token) {
          const grant: LeaseGrant = { ...ref, token: Number(token) };
          this.ledger.record(ref.scope, ref.profile, ref.runId, grant.token);
          this.settleWaits(key, grant);
          if (this.listeners.size && this.pending.delete(key)) this.emit(grant, 'handoff');
        } else if (this.pending.has(key)) {
          // Neither holder nor waiter any more (released or withdrawn by another process): forget it.
          // A grant racing this read arrives on the channel, which is live by now.
          const ticket = await this.redis.zscore(this.keys.profileLeaseQueue(ref.scope, ref.profile), ref.runId);
          if (ticket === null) this.pending.delete(key);
        }
      }),
    );
  }

  private onMessage(channel: string, message: string): void {
    if (channel !== this.keys.leaseChannel() || this.closed) return;
    let event;
    try {
      event = parseLeaseEvent(message);
    } catch (err) {
      this.log.warn(`Ignoring a malformed lease event: ${(err as Error).message}`);
      return;
    }
    const { grant, via } = event;
    const key = refKey(grant);
    this.settleWaits(key, grant);
    if (this.ledger.record(grant.scope, grant.profile, grant.runId, grant.token) && this.listeners.size) {
      this.pending.delete(key);
      this.emit(grant, via);
    }
    // The lease changed hands: runs of this process still waiting check whether the new holder is alive.
    if (this.waitsHere(grant.scope, grant.profile)) this.reclaimWhileWaiting(grant.scope, grant.profile);
  }

  /** True when a run of this process waits for the profile (waitForGrant, or queued by acquire). */
  private waitsHere(scope: string, profile: string): boolean {
    const member = indexMember(scope, profile);
    const refs = [...[...this.waits.values()].map((e) => e.ref), ...this.pending.values()];
    return refs.some((ref) => indexMember(ref.scope, ref.profile) === member);
  }

  private settleWaits(key: string, grant: LeaseGrant): void {
    const entry = this.waits.get(key);
    if (entry) for (const wait of [...entry.waits]) wait.resolve(grant);
  }

  private emit(grant: LeaseGrant, via: GrantVia): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(grant, via);
      } catch (err) {
        this.log.error(
          `A lease grant listener failed for run ${grant.runId}, profile ${grant.profile}: ${(err as Error).message}`,
        );
      }
    }
  }

  /**
   * A check holds the profile this process waits for: its release hands the
   * lease on as any release does, but if its process died, only a reclaim
   * after its deadline frees the profile, and no grant would trigger one.
   */
  private reclaimAtDeadline(scope: string, profile: string, deadline: number): void {
    const timer = setTimeout(() => {
      this.checkDeadlines.delete(timer);
      if (!this.closed && this.waitsHere(scope, profile)) this.reclaimWhileWaiting(scope, profile);
    }, Math.max(0, deadline - Date.now()) + 250);
    timer.unref();
    this.checkDeadlines.add(timer);
  }

  /** One reclaim at a time per profile; a change while it runs asks for one more. */
  private reclaimWhileWaiting(scope: string, profile: string): void {
    const isRunAlive = this.options.isRunAlive;
    if (!isRunAlive || this.closed) return;
    const member = indexMember(scope, profile);
    const running = this.reclaiming.get(member);
    if (running) {
      running.again = true;
      return;
    }
    const run = { again: false };
    this.reclaiming.set(member, run);
    const loop = async () => {
      do {
        run.again = false;
        const outcome = await this.reclaim(scope, profile, isRunAlive);
        if (outcome.releasedHolder) {
          this.log.log(
            `Reclaimed browser profile ${profile} from ${checkHolderExpiry(outcome.releasedHolder.runId) === undefined ? 'finished run' : 'expired profile check'} ${outcome.releasedHolder.runId}` +
              (outcome.holder ? `; now held by run ${outcome.holder.runId}` : ''),
          );
        }
        const deadline = outcome.holder ? checkHolderExpiry(outcome.holder.runId) : undefined;
        if (deadline !== undefined) this.reclaimAtDeadline(scope, profile, deadline);
      } while (run.again && !this.closed);
    };
    loop()
      .catch((err: Error) => {
        if (!this.closed) this.log.warn(`Reclaim of browser profile ${profile} while waiting failed: ${err.message}`);
      })
      .finally(() => this.reclaiming.delete(member));
  }
}
