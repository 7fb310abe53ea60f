import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { isTerminalRunState, isTerminalStageState, type RunEvent } from '@stageflow/contracts';
import { EVENT_TAIL_FACTORY, type CursorEvent, type EventTailApi, type EventTailFactory } from '@stageflow/engine';
import { LiveViewTickets } from '@stageflow/live-view';
import { setTimeout as sleep } from 'node:timers/promises';
import { StageViews } from '../views/stage-views.service';

const BLOCK_MS = 2000;
const RETRY_MS = 1000;
const SHUTDOWN_WAIT_MS = 2000;

/** What an event ends: the views and unused tickets it covers. */
export type ViewEnd =
  | { kind: 'gate-answered'; runId: string; stageId: string }
  | { kind: 'stage-ended'; runId: string; stageId: string; attempt: number }
  | { kind: 'run-ended'; runId: string; state: string };

/**
 * Which live views an event ends (pure):
 * - `gate.answered`: the stage's interactive views (view-only ones watch on);
 * - `stage.state` terminal for an attempt: that attempt's views; a newer attempt
 *   queued (a retry): the older attempts' views;
 * - `run.state` terminal: every view of the run.
 */
export function viewEndOf(event: RunEvent): ViewEnd | undefined {
  if (event.type === 'gate.answered' && event.stageId) return { kind: 'gate-answered', runId: event.runId, stageId: event.stageId };
  if (event.type === 'stage.state' && event.stageId) {
    const { state, attempt } = (event as RunEvent<'stage.state'>).data;
    const ended = isTerminalStageState(state) ? attempt : attempt - 1;
    return ended >= 1 ? { kind: 'stage-ended', runId: event.runId, stageId: event.stageId, attempt: ended } : undefined;
  }
  if (event.type === 'run.state') {
    const { state } = (event as RunEvent<'run.state'>).data;
    if (isTerminalRunState(state)) return { kind: 'run-ended', runId: event.runId, state };
  }
  return undefined;
}

/**
 * Follows every run's events from now on and closes what they end: the views (an
 * `ended` message, then the socket closes) and the unused tickets (revoked in Redis).
 * A ticket issued just before is also refused when used, because admission checks
 * the run, the session and the gate again.
 */
@Injectable()
export class ViewRevocations implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('ViewRevocations');
  private tail?: EventTailApi;
  private cursor?: string;
  private stopping = false;
  private readonly stopped = new AbortController();
  private loop?: Promise<void>;

  constructor(
    @Inject(EVENT_TAIL_FACTORY) private readonly tails: EventTailFactory,
    private readonly views: StageViews,
    private readonly tickets: LiveViewTickets,
  ) {}

  /** Starts following events; does not wait for Redis (the relay boots, and reports its health, without it). */
  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    await this.tail?.close().catch(() => undefined);
    // A read waiting for an unreachable Redis may not notice its connection closing: bounded.
    await Promise.race([this.loop, sleep(SHUTDOWN_WAIT_MS, undefined, { ref: false })]);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const tail = (this.tail ??= this.tails());
        // The first read pins "now" (cursor undefined); later ones go on from the last event.
        await this.handle(await tail.tailAll(this.cursor, BLOCK_MS));
      } catch (error) {
        if (this.stopping) break;
        this.log.warn({ msg: `Reading run events failed: ${(error as Error).message}; retrying` });
        await this.tail?.close().catch(() => undefined);
        this.tail = undefined;
        await sleep(RETRY_MS, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      }
    }
  }

  private async handle(batch: CursorEvent[]): Promise<void> {
    for (const { cursor, event } of batch) {
      const end = viewEndOf(event);
      if (end) {
        await this.apply(end).catch((error: Error) =>
          this.log.error({ msg: `Closing live views after ${event.type} failed: ${error.message}`, runId: event.runId, stageId: event.stageId }),
        );
      }
      this.cursor = cursor;
    }
  }

  /**
   * Views first, then tickets: browser-host acts on the same events and closes the
   * stage's tab, and a viewer should learn why the view ended (the gate was answered)
   * before the tab goes.
   */
  private async apply(end: ViewEnd): Promise<void> {
    switch (end.kind) {
      case 'gate-answered':
        await this.views.endMode({ runId: end.runId, stageId: end.stageId }, 'interactive', 'gate-answered', 'The gate was answered, so this live view is closed.');
        await this.tickets.revoke({ runId: end.runId, stageId: end.stageId, mode: 'interactive' });
        break;
      case 'stage-ended':
        await this.views.end({ runId: end.runId, stageId: end.stageId, attempt: end.attempt }, 'stage-ended', 'The stage has ended, so its live view is closed.');
        await this.tickets.revoke({ runId: end.runId, stageId: end.stageId, attempt: end.attempt });
        break;
      case 'run-ended':
        await this.views.end({ runId: end.runId }, 'run-ended', `The run has ended (${end.state}), so its live view is closed.`);
        await this.tickets.revoke({ runId: end.runId });
        break;
    }
  }
}
