import type { LoggerService } from '@nestjs/common';
import {
  LIVE_VIEW_CLOSE_CODES,
  LIVE_VIEW_LIMITS,
  parseLiveViewClientMessage,
  type LiveViewEndReason,
  type LiveViewMode,
  type LiveViewServerMessage,
} from '@stageflow/contracts';
import WebSocket from 'ws';
import type { StageView, ViewerPort } from '../views/stage-view';
import { FrameOutbox, type Frame } from './frame-outbox';
import { InputBudget } from './input-budget';

/** Invalid messages a viewer may send before it is disconnected (1008). */
export const MAX_INVALID_MESSAGES = 20;
/** The same error code is sent at most once per this interval (a held key must not flood the viewer). */
const REFUSAL_INTERVAL_MS = 1000;

/**
 * One viewer's WebSocket: validates each message (contracts' parser), limits its rate,
 * hands it to the stage view, and sends the view's messages and frames back (frames
 * newest-only, see FrameOutbox). Logs the view's ids, never a frame or an input.
 */
export class Viewer implements ViewerPort {
  private readonly outbox: FrameOutbox;
  private readonly budget: InputBudget;
  private readonly lastRefusal = new Map<string, number>();
  private invalid = 0;
  private ended = false;
  private alive = true;

  constructor(
    readonly id: number,
    readonly mode: LiveViewMode,
    private readonly socket: WebSocket,
    private readonly view: StageView,
    private readonly log: LoggerService,
  ) {
    this.outbox = new FrameOutbox(socket);
    this.budget = new InputBudget(LIVE_VIEW_LIMITS.maxInputPerSecond);
    socket.on('message', (data: Buffer, isBinary: boolean) => this.receive(data, isBinary));
    socket.on('pong', () => {
      this.alive = true;
    });
    socket.on('close', () => this.closed());
    socket.on('error', () => undefined);
  }

  /** Called by the server's heartbeat: a viewer that did not answer the last ping is dropped. */
  heartbeat(): void {
    if (!this.alive) {
      this.socket.terminate();
      return;
    }
    this.alive = false;
    this.socket.ping();
  }

  send(message: LiveViewServerMessage): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  sendFrame(frame: Frame): void {
    if (this.socket.readyState === WebSocket.OPEN) this.outbox.offer(frame);
  }

  resetFrames(): void {
    this.outbox.resetMeta();
  }

  refuse(code: string, message: string): void {
    const now = Date.now();
    if (now - (this.lastRefusal.get(code) ?? -Infinity) < REFUSAL_INTERVAL_MS) return;
    this.lastRefusal.set(code, now);
    this.send({ type: 'error', code, message });
  }

  end(reason: LiveViewEndReason, message: string): void {
    if (this.ended) return;
    this.ended = true;
    this.outbox.close();
    this.send({ type: 'ended', reason, message });
    // After this, input has nowhere to go: the socket is closing and the view forgot this viewer.
    this.socket.close(reason === 'relay-stopping' ? LIVE_VIEW_CLOSE_CODES.goingAway : LIVE_VIEW_CLOSE_CODES.ended, reason);
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (this.ended) return;
    const parsed = parseLiveViewClientMessage(data, isBinary);
    if (!parsed.ok) {
      this.invalid += 1;
      if (this.invalid > MAX_INVALID_MESSAGES) {
        this.log.warn?.({ msg: 'Closed a live view that sent too many invalid messages', ...this.ids() });
        this.ended = true;
        this.socket.close(LIVE_VIEW_CLOSE_CODES.policyViolation, 'too many invalid messages');
        return;
      }
      this.refuse(parsed.code, `${parsed.message}. The protocol is in docs/live-view.md.`);
      return;
    }
    if (!this.budget.take()) {
      this.refuse('input_rate_limited', `More than ${LIVE_VIEW_LIMITS.maxInputPerSecond} messages a second: some were dropped.`);
      return;
    }
    this.view.handle(this, parsed.message);
  }

  private closed(): void {
    this.ended = true;
    this.outbox.close();
    this.view.leave(this);
  }

  private ids(): Record<string, unknown> {
    return { runId: this.view.runId, stageId: this.view.stageId, attempt: this.view.attempt, viewer: this.id, mode: this.mode };
  }
}
