import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { EVENT_TAIL_FACTORY, type EventTailFactory, RUNS_API, type RunsApi } from '@stageflow/engine';
import type { WebSocket } from 'ws';
import { EventSession } from './event-session';
import { EVENTS_OPTIONS, type EventsOptions } from './events.options';

/** The open WebSocket sessions; closes their tails when a client leaves or the api stops. */
@Injectable()
export class EventsService implements OnApplicationShutdown {
  private readonly logger = new Logger('EventsService');
  private readonly sessions = new Map<WebSocket, EventSession>();

  constructor(
    @Inject(RUNS_API) private readonly runs: RunsApi,
    @Inject(EVENT_TAIL_FACTORY) private readonly tails: EventTailFactory,
    @Inject(EVENTS_OPTIONS) private readonly options: EventsOptions,
  ) {}

  open(socket: WebSocket): void {
    this.sessions.set(socket, new EventSession(socket, { runs: this.runs, tails: this.tails, options: this.options, logger: this.logger }));
  }

  async close(socket: WebSocket): Promise<void> {
    const session = this.sessions.get(socket);
    this.sessions.delete(socket);
    await session?.close();
  }

  /** Open sessions and their subscriptions, for tests and diagnostics. */
  stats(): { sessions: number; subscriptions: number } {
    let subscriptions = 0;
    for (const session of this.sessions.values()) subscriptions += session.subscriptionCount;
    return { sessions: this.sessions.size, subscriptions };
  }

  async onApplicationShutdown(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }
}
