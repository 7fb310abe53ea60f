import type { Logger } from '@nestjs/common';
import { StageflowError } from '@stageflow/contracts';
import type { EventTailFactory, RunsApi } from '@stageflow/engine';
import type { RawData, WebSocket } from 'ws';
import { AllRunsSubscription, EventSubscription, RunSubscription, SubscriptionSink } from './event-subscription';
import type { EventsOptions } from './events.options';
import { ClientMessage, parseClientMessage, subscriptionKey, SubscriptionTarget, WsProtocolError } from './ws-message';
import type { ServerMessage } from './ws-server-message';

/** Page size when finding a run's latest seq for an "only new events" subscription. */
const HISTORY_PAGE = 1000;
const DRAIN_POLL_MS = 50;

export interface EventSessionDeps {
  runs: RunsApi;
  tails: EventTailFactory;
  options: EventsOptions;
  logger: Logger;
}

/**
 * One WebSocket connection: parses each frame, keeps its subscriptions (one per
 * run, plus "all"), and closes their tails when the client leaves. Frames are
 * handled one after another, so a subscribe and an unsubscribe never race.
 */
export class EventSession implements SubscriptionSink {
  private readonly subscriptions = new Map<string, EventSubscription>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private alive = true;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: EventSessionDeps,
  ) {
    socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    socket.on('pong', () => (this.alive = true));
    this.heartbeat = setInterval(() => this.beat(), deps.options.heartbeatMs);
    this.heartbeat.unref();
  }

  send(message: ServerMessage): void {
    if (!this.closed && this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  async drained(): Promise<void> {
    while (!this.closed && this.socket.bufferedAmount > this.deps.options.highWaterBytes) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
  }

  /** Stops every subscription (closing its tail); called when the socket closes or the app stops. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    const subscriptions = [...this.subscriptions.values()];
    this.subscriptions.clear();
    await Promise.all(subscriptions.map((s) => s.stop()));
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  private beat(): void {
    if (!this.alive) {
      this.socket.terminate();
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  private receive(data: RawData, isBinary: boolean): void {
    let message: ClientMessage;
    try {
      if (isBinary) throw new WsProtocolError('invalid_message', 'Invalid message: send JSON as text frames, not binary.');
      message = parseClientMessage(rawToString(data));
    } catch (error) {
      this.reportError(error);
      return;
    }
    this.queue = this.queue.then(() => this.handle(message)).catch((error) => this.reportError(error, message));
  }

  private async handle(message: ClientMessage): Promise<void> {
    if (this.closed) return;
    const key = subscriptionKey(message.target);
    const existing = this.subscriptions.get(key);
    if (message.type === 'unsubscribe') {
      if (!existing) {
        throw new StageflowError('not_subscribed', 'There is no such subscription on this connection.');
      }
      this.subscriptions.delete(key);
      await existing.stop();
      this.send(message.target.kind === 'all' ? { type: 'unsubscribed', all: true } : { type: 'unsubscribed', run: message.target.runId });
      return;
    }
    // Subscribing again replaces the subscription: the way to resume from another point.
    if (existing) {
      this.subscriptions.delete(key);
      await existing.stop();
    }
    if (this.subscriptions.size >= this.deps.options.maxSubscriptions) {
      throw new StageflowError(
        'too_many_subscriptions',
        `A connection holds at most ${this.deps.options.maxSubscriptions} subscriptions: unsubscribe from one first, or subscribe to "all".`,
      );
    }
    const subscription =
      message.target.kind === 'run'
        ? await this.subscribeRun(message.target.runId, message.after as number | undefined)
        : await this.subscribeAll(message.after as string | undefined);
    if (this.closed) {
      await subscription.stop();
      return;
    }
    this.subscriptions.set(key, subscription);
    subscription.start();
  }

  private async subscribeRun(runId: string, after: number | undefined): Promise<RunSubscription> {
    // run_not_found for an unknown run, before any tail (Redis connection) is opened.
    await this.deps.runs.getRun(runId);
    const from = after ?? (await this.latestSeq(runId));
    const target: SubscriptionTarget = { kind: 'run', runId };
    const subscription = new RunSubscription(runId, from, this.deps.tails(), this, this.deps.options.blockMs, (error) =>
      this.fail(target, error),
    );
    this.send({ type: 'subscribed', run: runId, after: from });
    return subscription;
  }

  private async subscribeAll(after: string | undefined): Promise<AllRunsSubscription> {
    const target: SubscriptionTarget = { kind: 'all' };
    const subscription = new AllRunsSubscription(after, this.deps.tails(), this, this.deps.options.blockMs, (error) =>
      this.fail(target, error),
    );
    try {
      await subscription.prime();
    } catch (error) {
      await subscription.stop();
      throw error;
    }
    this.send({ type: 'subscribed', all: true, after: after ?? null });
    return subscription;
  }

  private async latestSeq(runId: string): Promise<number> {
    let seq = 0;
    for (;;) {
      const page = await this.deps.runs.readEvents(runId, seq, HISTORY_PAGE);
      if (page.length) seq = page[page.length - 1].seq;
      if (page.length < HISTORY_PAGE) return seq;
    }
  }

  /** A tail failed (Redis gone, run deleted): end that subscription and tell the client how to resume. */
  private fail(target: SubscriptionTarget, error: unknown): void {
    const key = subscriptionKey(target);
    const subscription = this.subscriptions.get(key);
    if (subscription) {
      this.subscriptions.delete(key);
      void subscription.stop();
    }
    this.deps.logger.warn(`event subscription ${key} failed: ${error instanceof Error ? error.message : String(error)}`);
    this.send({
      type: 'error',
      code: error instanceof StageflowError ? error.code : 'subscription_failed',
      message: 'The subscription stopped on a server error: subscribe again with "after" set to the last seq (or cursor) you received.',
      ...(target.kind === 'run' ? { run: target.runId } : { all: true as const }),
    });
  }

  private reportError(error: unknown, message?: ClientMessage): void {
    const about = message
      ? message.target.kind === 'run'
        ? { run: message.target.runId }
        : { all: true as const }
      : {};
    if (error instanceof WsProtocolError || error instanceof StageflowError) {
      this.send({ type: 'error', code: error.code, message: error.message, ...about });
      return;
    }
    this.deps.logger.error(`websocket message failed: ${String(error)}`, error instanceof Error ? error.stack : undefined);
    this.send({ type: 'error', code: 'internal_error', message: 'The server failed on this message; it is in its log.', ...about });
  }
}

function rawToString(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
