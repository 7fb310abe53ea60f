import { Inject, Injectable, Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminalRunState, RedisKeys, type RunEvent } from '@stageflow/contracts';
import { EVENT_TAIL_FACTORY, type CursorEvent, type EventTailApi, type EventTailFactory } from '@stageflow/engine';
import { BrowserHostRedis } from '../browsers/browser-host.redis';
import { BROWSER_SETTINGS, type BrowserSettings } from '../browsers/browser-host.tokens';
import { RunTeardown } from './run-teardown.service';

/** How long one blocking read waits for events. */
const BLOCK_MS = 2000;
const RETRY_MS = 1000;

/**
 * Tails every run's events and tears down what ended: a stage's sessions when the
 * stage ends (or a newer attempt replaces it), a run's browsers when the run ends.
 * The cursor is kept in Redis after each batch, so a restarted browser-host resumes
 * where it stopped; ends older than the kept stream are the startup sweep's.
 */
@Injectable()
export class RunEndWatcher {
  private readonly log = new Logger('RunEndWatcher');
  private tail?: EventTailApi;
  private cursor?: string;
  private stopping = false;
  private readonly stopped = new AbortController();
  private loop?: Promise<void>;

  constructor(
    @Inject(EVENT_TAIL_FACTORY) private readonly tails: EventTailFactory,
    private readonly teardown: RunTeardown,
    private readonly redis: BrowserHostRedis,
    private readonly keys: RedisKeys,
    @Inject(BROWSER_SETTINGS) private readonly settings: BrowserSettings,
  ) {}

  /**
   * Fixes where watching starts, before the startup sweep looks at the registry: the
   * stored cursor, or (first start) the stream's end now. Events after that point are
   * acted on by the watcher even if the sweep already handled them (both are idempotent).
   */
  async pin(): Promise<void> {
    this.tail ??= this.tails();
    this.cursor = (await this.redis.client.get(this.keys.hostEventCursor(this.settings.hostId))) ?? undefined;
    // Without a cursor the first read pins the tail's "now"; later reads continue from it.
    if (!this.cursor) await this.handle(await this.tail.tailAll(undefined, 1));
  }

  start(): void {
    if (this.loop || this.stopping) return;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    // Closing the tail's connection ends a blocking read at once.
    await this.tail?.close().catch(() => undefined);
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        const tail = (this.tail ??= this.tails());
        await this.handle(await tail.tailAll(this.cursor, BLOCK_MS));
      } catch (error) {
        if (this.stopping) break;
        this.log.warn({ msg: `Reading run events failed: ${(error as Error).message}; retrying` });
        await sleep(RETRY_MS, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      }
    }
  }

  /** Acts on a batch (runs in parallel, each run's events in order), then stores the cursor. */
  private async handle(batch: CursorEvent[]): Promise<void> {
    if (batch.length === 0) return;
    const byRun = new Map<string, RunEvent[]>();
    for (const { event } of batch) byRun.set(event.runId, [...(byRun.get(event.runId) ?? []), event]);
    await Promise.all(
      [...byRun].map(async ([runId, events]) => {
        for (const event of events) {
          try {
            await this.act(event);
          } catch (error) {
            // The startup sweep repairs what a failed teardown left; the stream must go on.
            this.log.error({ msg: `Teardown after ${event.type} failed: ${(error as Error).message}`, runId, stageId: event.stageId });
          }
        }
      }),
    );
    this.cursor = batch[batch.length - 1].cursor;
    await this.redis.client.set(this.keys.hostEventCursor(this.settings.hostId), this.cursor);
  }

  private async act(event: RunEvent): Promise<void> {
    if (event.type === 'run.state') {
      const { state } = (event as RunEvent<'run.state'>).data;
      if (isTerminalRunState(state)) await this.teardown.runEnded(event.runId, `ended (${state})`);
    } else if (event.type === 'stage.state' && event.stageId) {
      const { state, attempt } = (event as RunEvent<'stage.state'>).data;
      await this.teardown.stageChanged(event.runId, { stageId: event.stageId, state, attempt });
    }
  }
}
