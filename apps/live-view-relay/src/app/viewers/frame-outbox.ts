import type { FrameMeta } from '../views/input-mapping';

/** One picture of the page: JPEG bytes and the geometry they show. */
export interface Frame {
  jpeg: Buffer;
  meta: FrameMeta;
}

/** The part of a `ws` WebSocket the outbox uses. */
export interface FrameSocket {
  /** Bytes queued in the socket and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  send(data: Buffer | string, callback: (error?: Error) => void): void;
}

/** Bytes queued to a viewer above which a new frame waits (and is replaced by newer ones). */
export const FRAME_HIGH_WATER_BYTES = 256 * 1024;
/** How often a blocked outbox looks again at the socket's queue. */
const RETRY_MS = 50;

/**
 * Frames to one viewer, newest only. At most one frame is on its way; while it is
 * (or while the socket's queue is over {@link FRAME_HIGH_WATER_BYTES}) a newer frame
 * replaces the waiting one. A slow viewer therefore sees fewer frames and never more
 * than one behind; the browser and the other viewers do not wait for it. Each frame
 * goes out after a `frame-meta` message when its geometry differs from the last one
 * this viewer got.
 */
export class FrameOutbox {
  private waiting?: Frame;
  private inFlight = false;
  private lastMeta?: string;
  private retry?: ReturnType<typeof setTimeout>;
  private closed = false;
  /** Frames replaced before they were sent (for tests and metrics). */
  dropped = 0;
  sent = 0;

  constructor(
    private readonly socket: FrameSocket,
    private readonly highWaterBytes: number = FRAME_HIGH_WATER_BYTES,
  ) {}

  offer(frame: Frame): void {
    if (this.closed) return;
    if (this.waiting) this.dropped += 1;
    this.waiting = frame;
    this.pump();
  }

  /** Forget the geometry sent last (the view moved to another page): the next frame is preceded by its `frame-meta`. */
  resetMeta(): void {
    this.lastMeta = undefined;
  }

  close(): void {
    this.closed = true;
    this.waiting = undefined;
    if (this.retry) clearTimeout(this.retry);
  }

  private pump(): void {
    if (this.closed || this.inFlight || !this.waiting || this.retry) return;
    if (this.socket.bufferedAmount > this.highWaterBytes) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.pump();
      }, RETRY_MS);
      return;
    }
    const frame = this.waiting;
    this.waiting = undefined;
    const meta = JSON.stringify({ type: 'frame-meta', ...frame.meta });
    if (meta !== this.lastMeta) {
      this.lastMeta = meta;
      this.socket.send(meta, () => undefined);
    }
    this.inFlight = true;
    this.sent += 1;
    this.socket.send(frame.jpeg, (error) => {
      this.inFlight = false;
      if (error) {
        this.close();
        return;
      }
      this.pump();
    });
  }
}
