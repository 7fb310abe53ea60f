import type { RunEvent } from '@stageflow/contracts';

/** Every frame the server sends (docs/api.md, "WebSocket"). */
export type ServerMessage =
  | { type: 'subscribed'; run: string; after: number }
  | { type: 'subscribed'; all: true; after: string | null }
  | { type: 'unsubscribed'; run: string }
  | { type: 'unsubscribed'; all: true }
  | { type: 'event'; event: RunEvent }
  | { type: 'event'; event: RunEvent; cursor: string }
  | { type: 'error'; code: string; message: string; run?: string; all?: true };
