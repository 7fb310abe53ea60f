import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { CdpConnection } from '@stageflow/cdp';
import type { LiveViewEndReason, LiveViewMode, SessionRecord } from '@stageflow/contracts';
import { BrowserHostClient } from '../browser-host.client';
import { STAGE_VIEW_OPTIONS } from '../service-config';
import { StageView, type StageViewOptions } from './stage-view';

/** Which views an end applies to. */
export interface ViewScope {
  runId: string;
  stageId?: string;
  /** This attempt and older ones. */
  attempt?: number;
}

/**
 * The stage views of this relay, one per stage session, created for the first viewer
 * and ended when the gate, stage or run says so (or a while after the last viewer).
 */
@Injectable()
export class StageViews implements BeforeApplicationShutdown {
  private readonly log = new Logger('StageViews');
  private readonly views = new Map<string, Promise<StageView>>();

  constructor(
    @Inject(STAGE_VIEW_OPTIONS) private readonly options: StageViewOptions,
    private readonly browserHost: BrowserHostClient,
  ) {}

  /** The session's view, attaching to its tab when there is none yet. */
  async viewOf(session: SessionRecord): Promise<StageView> {
    const existing = this.views.get(session.sessionId);
    if (existing) {
      const view = await existing.catch(() => undefined);
      if (view && !view.isEnded) return view;
    }
    const opening = StageView.open(session, this.options, {
      connect: (endpoint) => CdpConnection.connect(endpoint, { connectTimeoutMs: 5000, callTimeoutMs: this.options.cdpTimeoutMs }),
      reopen: (sessionId) => this.browserHost.reopen(sessionId),
      onEnded: (view) => {
        void this.views.get(view.sessionId)?.then((current) => {
          if (current === view) this.views.delete(view.sessionId);
        });
      },
      log: this.log,
    });
    this.views.set(session.sessionId, opening);
    opening.catch(() => {
      if (this.views.get(session.sessionId) === opening) this.views.delete(session.sessionId);
    });
    const view = await opening;
    this.log.log({ msg: 'Attached a live view to a stage\'s tab', runId: session.runId, stageId: session.stageId, attempt: session.attempt, browserId: session.browserId });
    return view;
  }

  /** Ends the views in scope for all their viewers. */
  async end(scope: ViewScope, reason: LiveViewEndReason, message: string): Promise<number> {
    const views = await this.inScope(scope);
    for (const view of views) view.end(reason, message);
    return views.length;
  }

  /** Ends the viewers of one mode of the views in scope (a gate answer: the interactive ones). */
  async endMode(scope: ViewScope, mode: LiveViewMode, reason: LiveViewEndReason, message: string): Promise<void> {
    for (const view of await this.inScope(scope)) view.endViewers(mode, reason, message);
  }

  /** Viewers are told (1001) before the HTTP server closes: an upgraded socket would keep the process up. */
  async beforeApplicationShutdown(): Promise<void> {
    for (const view of await this.all()) view.end('relay-stopping', 'The live view relay is restarting; open the view again in a moment.');
  }

  private async inScope(scope: ViewScope): Promise<StageView[]> {
    return (await this.all()).filter(
      (v) =>
        v.runId === scope.runId &&
        (scope.stageId === undefined || v.stageId === scope.stageId) &&
        (scope.attempt === undefined || v.attempt <= scope.attempt),
    );
  }

  private async all(): Promise<StageView[]> {
    const settled = await Promise.allSettled([...this.views.values()]);
    return settled.flatMap((s) => (s.status === 'fulfilled' && !s.value.isEnded ? [s.value] : []));
  }
}
