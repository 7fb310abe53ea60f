import type { CursorEvent, EventTailApi } from '@stageflow/engine';
import type { ServerMessage } from './ws-server-message';

/** Where a subscription delivers, and how it waits for a slow client. */
export interface SubscriptionSink {
  send(message: ServerMessage): void;
  /** Resolves when the client has taken most of what was sent (or is gone). */
  drained(): Promise<void>;
}

/**
 * One subscription of one connection: a loop over its own tail (a blocking
 * read on its own Redis connection), until stopped. `stop()` closes the tail,
 * which ends the blocking read; anything it returns afterwards is dropped.
 */
export abstract class EventSubscription {
  private active = true;

  constructor(
    protected readonly tail: EventTailApi,
    protected readonly sink: SubscriptionSink,
    protected readonly blockMs: number,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  /**
   * Fixes where the subscription starts, before the client is told it is
   * subscribed: events after `subscribed` must not be missed.
   */
  async prime(): Promise<void> {
    // Nothing to fix by default: a run subscription starts at a known seq.
  }

  start(): void {
    void this.loop().catch((error: unknown) => {
      if (this.active) this.onFailure(error);
    });
  }

  async stop(): Promise<void> {
    if (!this.active) return;
    this.active = false;
    await this.tail.close().catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (this.active) {
      await this.sink.drained();
      if (!this.active) return;
      await this.pollOnce(() => this.active);
    }
  }

  /** One blocking read; sends what arrived unless `stillActive()` turned false meanwhile. */
  protected abstract pollOnce(stillActive: () => boolean): Promise<void>;
}

/** Events of one run, in seq order, strictly after the last seq sent: no gap, no duplicate. */
export class RunSubscription extends EventSubscription {
  constructor(
    readonly runId: string,
    private lastSeq: number,
    tail: EventTailApi,
    sink: SubscriptionSink,
    blockMs: number,
    onFailure: (error: unknown) => void,
  ) {
    super(tail, sink, blockMs, onFailure);
  }

  protected async pollOnce(stillActive: () => boolean): Promise<void> {
    const events = await this.tail.tailRun(this.runId, this.lastSeq, this.blockMs);
    for (const event of events) {
      if (!stillActive()) return;
      if (event.seq <= this.lastSeq) continue;
      this.sink.send({ type: 'event', event });
      this.lastSeq = event.seq;
    }
  }
}

/** Events of every run, each with the cursor to resume after it. */
export class AllRunsSubscription extends EventSubscription {
  constructor(
    private cursor: string | undefined,
    tail: EventTailApi,
    sink: SubscriptionSink,
    blockMs: number,
    onFailure: (error: unknown) => void,
  ) {
    super(tail, sink, blockMs, onFailure);
  }

  private primed: CursorEvent[] = [];

  /**
   * "Only new events" is resolved by the tail on its first read; a 1 ms read
   * makes that happen now. What it returns is already after the start point
   * and is sent first.
   */
  override async prime(): Promise<void> {
    if (this.cursor === undefined) this.primed = await this.tail.tailAll(undefined, 1);
  }

  protected async pollOnce(stillActive: () => boolean): Promise<void> {
    const batch = this.primed.length ? this.primed : await this.tail.tailAll(this.cursor, this.blockMs);
    this.primed = [];
    for (const { cursor, event } of batch) {
      if (!stillActive()) return;
      this.sink.send({ type: 'event', event, cursor });
      this.cursor = cursor;
    }
  }
}
