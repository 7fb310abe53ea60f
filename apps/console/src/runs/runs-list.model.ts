import { isTerminalRunState, type RunEventData } from '@stageflow/contracts';
import type { RunEvent, RunSummary } from '../api/api.types';

const MAX_EARLY = 500;

export interface RunRow {
  id: string;
  pipeline: string;
  state: RunSummary['state'];
  reason?: string;
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
}

/**
 * The runs list: pages read over REST, kept current by the all-runs event
 * stream. A run's record and its events share one timestamp per change, so
 * whichever of a page and an event is newer wins, whatever order they arrive in.
 */
export class RunsListModel {
  private readonly rows = new Map<string, RunRow>();
  /** The newest `run.state` of runs not on a page yet: a page read before the change must not win. */
  private readonly early = new Map<string, RunEvent>();

  /** Newest first (creation time, then id, as the api pages them). */
  list(): RunRow[] {
    return [...this.rows.values()].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
  }

  get size(): number {
    return this.rows.size;
  }

  /** Rows from `GET /api/runs`; a row an event has already moved past is kept. */
  mergePage(items: RunSummary[]): void {
    for (const item of items) {
      const row: RunRow = {
        id: item.id,
        pipeline: item.pipeline,
        state: item.state,
        reason: item.reason,
        createdAt: item.createdAt,
        updatedAt: item.updatedAt,
        endedAt: item.endedAt,
      };
      const known = this.rows.get(item.id);
      if (!known || known.updatedAt <= row.updatedAt) this.rows.set(item.id, row);
      const early = this.early.get(item.id);
      if (early) {
        this.early.delete(item.id);
        this.applyEvent(early);
      }
    }
  }

  /** True when the event changed the list. */
  applyEvent(event: RunEvent): boolean {
    if (event.type === 'run.created') {
      if (this.rows.has(event.runId)) return false;
      const data = event.data as RunEventData['run.created'];
      this.rows.set(event.runId, { id: event.runId, pipeline: data.pipeline, state: 'queued', createdAt: event.at, updatedAt: event.at });
      return true;
    }
    if (event.type === 'run.state') {
      const row = this.rows.get(event.runId);
      if (!row) {
        // Not on a page read so far: kept until its page arrives (bounded; older runs are rarely paged in).
        if (this.early.size >= MAX_EARLY) this.early.delete(this.early.keys().next().value as string);
        this.early.set(event.runId, event);
        return false;
      }
      if (event.at < row.updatedAt) return false;
      const data = event.data as RunEventData['run.state'];
      row.state = data.state;
      row.reason = data.reason;
      row.updatedAt = event.at;
      row.endedAt = isTerminalRunState(data.state) ? event.at : undefined;
      return true;
    }
    return false;
  }
}
