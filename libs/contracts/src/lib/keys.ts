/**
 * Every Redis key Stageflow uses is built here, under one prefix (default
 * `sf:`; tests pass their own so they never collide). No other file spells a key.
 */
export class RedisKeys {
  constructor(readonly prefix = 'sf:') {}

  /** Hash: the run record (see RunRecord). */
  run(runId: string): string {
    return `${this.prefix}run:${runId}`;
  }
  /** Hash: one stage of a run (see StageRecord). */
  stage(runId: string, stageId: string): string {
    return `${this.prefix}run:${runId}:stage:${stageId}`;
  }
  /** Stream: the run's event history; entry ids are `<seq>-0`. */
  runEvents(runId: string): string {
    return `${this.prefix}run:${runId}:events`;
  }
  /** String: the run's last event sequence number. */
  runEventSeq(runId: string): string {
    return `${this.prefix}run:${runId}:seq`;
  }
  /** String: short mutex held while a run is advanced (joins, slots). */
  runAdvanceLock(runId: string): string {
    return `${this.prefix}run:${runId}:advance-lock`;
  }
  /** Sorted set: all run ids by creation time (ms). */
  runsIndex(): string {
    return `${this.prefix}runs`;
  }
  /** Set: ids of runs not yet in a terminal state. */
  activeRuns(): string {
    return `${this.prefix}runs:active`;
  }
  /** Stream: every event of every run, capped; backs "subscribe to all". */
  allEvents(): string {
    return `${this.prefix}events`;
  }
  /** Pub/sub channel: a run was cancelled; runners kill its stage processes. */
  cancelChannel(): string {
    return `${this.prefix}cancel`;
  }
  /** Hash: registered pipelines, name → YAML source. */
  pipelines(): string {
    return `${this.prefix}pipelines`;
  }
  /** Hash: registration metadata, name → JSON { updatedAt, stages }. */
  pipelineMeta(): string {
    return `${this.prefix}pipelines:meta`;
  }
  /** String: lock held by the one runner that sweeps for abandoned runs (see docs/run-engine.md). */
  abandonSweepLock(): string {
    return `${this.prefix}runs:abandon-sweep-lock`;
  }
  /** BullMQ prefix: BullMQ builds its own keys under it. */
  bullPrefix(): string {
    return `${this.prefix}bull`;
  }
  /** Hash: the holder of a browser profile's lease: `runId`, `token` (fencing), `since` (ms). Absent when free. */
  profileLease(scope: string, profile: string): string {
    return `${this.prefix}lease:${scope}:${profile}`;
  }
  /** Sorted set: runs waiting for a profile's lease, scored by their ticket from {@link leaseFence} (FIFO). */
  profileLeaseQueue(scope: string, profile: string): string {
    return `${this.prefix}lease:${scope}:${profile}:queue`;
  }
  /** Hash: when each waiting run joined a profile's queue, runId → ms. */
  profileLeaseWaitingSince(scope: string, profile: string): string {
    return `${this.prefix}lease:${scope}:${profile}:since`;
  }
  /**
   * Hash: what the api keeps about a profile's login check: `check` (the default
   * criteria, JSON) and `last` (the last "Check now" result, JSON). Never a path.
   */
  profileCheck(scope: string, profile: string): string {
    return `${this.prefix}profile-check:${scope}:${profile}`;
  }
  /** Set: `scope/profile` of every lease with a holder or waiters (walked by reclaim-all and run teardown). */
  leaseIndex(): string {
    return `${this.prefix}leases`;
  }
  /** String: INCR'd for every lease grant (the fencing token) and queue entry (the ticket). */
  leaseFence(): string {
    return `${this.prefix}lease-fence`;
  }
  /** Pub/sub channel: lease grants (JSON, parsed by the leases lib); wakes waiting runs. */
  leaseChannel(): string {
    return `${this.prefix}lease-events`;
  }
  /** Hash: one browser of browser-host's registry (see docs/browser-sessions.md); never a profile path. */
  hostBrowser(browserId: string): string {
    return `${this.prefix}browser:${browserId}`;
  }
  /** Set: ids of the browsers one browser-host runs (walked by its startup sweep). */
  hostBrowsers(hostId: string): string {
    return `${this.prefix}browser-host:${hostId}:browsers`;
  }
  /** Hash: one stage session (a tab and an agent-browser session) of browser-host's registry. */
  hostSession(sessionId: string): string {
    return `${this.prefix}browser-session:${sessionId}`;
  }
  /** Set: ids of the stage sessions one browser-host holds open. */
  hostSessions(hostId: string): string {
    return `${this.prefix}browser-host:${hostId}:sessions`;
  }
  /** Set: ids of a run's browsers (shared and throw-away), for its teardown. */
  runBrowsers(runId: string): string {
    return `${this.prefix}run:${runId}:browsers`;
  }
  /** Set: ids of a run's open stage sessions, for stage and run teardown. */
  runBrowserSessions(runId: string): string {
    return `${this.prefix}run:${runId}:browser-sessions`;
  }
  /**
   * Hash: the soft allowlist audit a profile stage session still owes (its run, stage,
   * profile, allowDomains); removed when the runner's activity report is audited, or
   * when the report is overdue (`allowlist_unverified`).
   */
  hostAllowlistAudit(sessionId: string): string {
    return `${this.prefix}browser-allowlist-audit:${sessionId}`;
  }
  /** Sorted set: a browser-host's pending allowlist audits (session ids), scored by the time the report is overdue (`+inf` while the session is open). */
  hostAllowlistAudits(hostId: string): string {
    return `${this.prefix}browser-host:${hostId}:allowlist-audits`;
  }
  /** Set: `<stageId> <host>` already audited `navigation_outside_allowlist` in a run, so a host is recorded once per stage across attempts. */
  runAllowlistHosts(runId: string): string {
    return `${this.prefix}run:${runId}:allowlist-hosts`;
  }
  /** String: the last event of the all-runs stream ({@link allEvents}) a browser-host has acted on. */
  hostEventCursor(hostId: string): string {
    return `${this.prefix}browser-host:${hostId}:event-cursor`;
  }
  /**
   * String (JSON `LiveViewTicketRecord`, with a TTL): one live-view ticket, under
   * the SHA-256 of the ticket (hex), so what Redis holds cannot be used to connect.
   */
  liveViewTicket(ticketDigest: string): string {
    return `${this.prefix}live-view-ticket:${ticketDigest}`;
  }
  /** Set: digests of a run's live-view tickets not yet used, for revocation at gate answer, stage end and run end. */
  runLiveViewTickets(runId: string): string {
    return `${this.prefix}run:${runId}:live-view-tickets`;
  }
}
