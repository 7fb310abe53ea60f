/**
 * A run's right to use a browser profile. `token` is the fencing token: it
 * grows with every grant, so a browser host that remembers the token it served
 * can refuse a stale holder (see {@link ProfileLeases.isCurrent}).
 */
export interface LeaseGrant {
  scope: string;
  profile: string;
  runId: string;
  token: number;
}

/** Who holds a lease, with its token and when it was granted (ISO 8601). */
export interface LeaseHolder {
  runId: string;
  token: number;
  since: string;
}

/** A run in a lease's queue: when it queued (ISO 8601) and its ticket (queue order). */
export interface LeaseWaiter {
  runId: string;
  since: string;
  /** Drawn from the same counter as fencing tokens, so tickets and tokens are totally ordered. */
  ticket: number;
}

/** What `GET /api/profiles/:name` shows: who holds the profile and who waits, first in line first. */
export interface LeaseState {
  scope: string;
  profile: string;
  holder?: LeaseHolder;
  waiters: LeaseWaiter[];
}

/** Result of {@link ProfileLeases.acquire}: the grant, or the run's place in the queue. */
export type AcquireOutcome =
  | { status: 'granted'; grant: LeaseGrant }
  | {
      status: 'queued';
      /** 1-based place in the queue; 1 is served next. */
      position: number;
      ticket: number;
      /** The run the caller waits for (name it in the "waiting for browser profile" message). */
      holder: LeaseHolder;
      /** When the caller joined the queue (ISO 8601); unchanged by repeated acquires. */
      since: string;
    };

/**
 * Result of {@link ProfileLeases.holdForCheck}: the lease under a check
 * holder id until `expiresAt`, or who holds it now (a run, or another check).
 */
export type CheckHoldOutcome =
  | { status: 'granted'; grant: LeaseGrant; expiresAt: string }
  | { status: 'busy'; holder: LeaseHolder };

/** How a grant came about: a free lease, a release handing over to the queue's head, or a reclaim. */
export type GrantVia = 'acquire' | 'handoff' | 'reclaim';

/** A message on the lease channel. Only grants are published: they are what waiters wait for. */
export interface LeaseGrantedEvent {
  type: 'granted';
  grant: LeaseGrant;
  via: GrantVia;
  /** ms since the epoch, Redis clock. */
  since: number;
}

/** Whether a run may still hold or wait for a lease: false once it is finished or gone. */
export type RunLiveness = (runId: string) => Promise<boolean>;

/** What one reclaim changed. Nothing changed when `releasedHolder` is absent and `removedWaiters` is empty. */
export interface ReclaimOutcome {
  scope: string;
  profile: string;
  /** The dead holder whose lease was released. */
  releasedHolder?: { runId: string; token: number };
  /** Dead runs taken out of the queue. */
  removedWaiters: string[];
  /** The holder after the reclaim (the next live waiter when the lease changed hands). */
  holder?: LeaseHolder;
}

/** A lease a run let go of in {@link ProfileLeases.releaseRun}. */
export interface RunLeaseRelease {
  scope: string;
  profile: string;
  /** It held the lease (now released, handed to the next waiter if any). */
  released: boolean;
  /** It waited in the queue (now removed). */
  withdrawn: boolean;
}
