import { FrameOutbox, type Frame, type FrameSocket } from './frame-outbox';

/** A socket whose writes complete only when the test says so: a slow viewer. */
class SlowSocket implements FrameSocket {
  bufferedAmount = 0;
  readonly sent: Array<Buffer | string> = [];
  private readonly pending: Array<(error?: Error) => void> = [];
  send(data: Buffer | string, callback: (error?: Error) => void): void {
    this.sent.push(data);
    if (typeof data === 'string') callback();
    else this.pending.push(callback);
  }
  /** The oldest binary write reaches the network. */
  flush(error?: Error): void {
    this.pending.shift()?.(error);
  }
  frames(): string[] {
    return this.sent.filter((d): d is Buffer => Buffer.isBuffer(d)).map((b) => b.toString());
  }
  metas(): unknown[] {
    return this.sent.filter((d): d is string => typeof d === 'string').map((s) => JSON.parse(s));
  }
}

const meta = { deviceWidth: 800, deviceHeight: 600, offsetTop: 0, pageScaleFactor: 1, scrollOffsetX: 0, scrollOffsetY: 0 };
const frame = (n: number, m = meta): Frame => ({ jpeg: Buffer.from(`frame${n}`), meta: m });

afterEach(() => jest.useRealTimers());

describe('FrameOutbox', () => {
  it('sends every frame to a viewer that keeps up, with the geometry before the first', () => {
    const socket = new SlowSocket();
    const outbox = new FrameOutbox(socket);
    for (let n = 1; n <= 3; n++) {
      outbox.offer(frame(n));
      socket.flush();
    }
    expect(socket.frames()).toEqual(['frame1', 'frame2', 'frame3']);
    expect(socket.metas()).toEqual([{ type: 'frame-meta', ...meta }]);
    expect(outbox.dropped).toBe(0);
  });

  it('keeps only the newest frame while one is on its way to a slow viewer', () => {
    const socket = new SlowSocket();
    const outbox = new FrameOutbox(socket);
    for (let n = 1; n <= 10; n++) outbox.offer(frame(n));
    expect(socket.frames()).toEqual(['frame1']);
    socket.flush();
    expect(socket.frames()).toEqual(['frame1', 'frame10']);
    socket.flush();
    expect(socket.frames()).toEqual(['frame1', 'frame10']);
    expect(outbox.dropped).toBe(8);
  });

  it('never lets one slow viewer hold back another', () => {
    const slow = new SlowSocket();
    const fast = new SlowSocket();
    const outboxes = [new FrameOutbox(slow), new FrameOutbox(fast)];
    for (let n = 1; n <= 5; n++) {
      for (const o of outboxes) o.offer(frame(n));
      fast.flush();
    }
    expect(fast.frames()).toEqual(['frame1', 'frame2', 'frame3', 'frame4', 'frame5']);
    expect(slow.frames()).toEqual(['frame1']);
  });

  it('waits while the socket\'s own queue is over the high-water mark, then sends the newest', () => {
    jest.useFakeTimers();
    const socket = new SlowSocket();
    socket.bufferedAmount = 10_000_000;
    const outbox = new FrameOutbox(socket, 1000);
    outbox.offer(frame(1));
    outbox.offer(frame(2));
    jest.advanceTimersByTime(200);
    expect(socket.frames()).toEqual([]);
    socket.bufferedAmount = 0;
    jest.advanceTimersByTime(50);
    expect(socket.frames()).toEqual(['frame2']);
  });

  it('sends the geometry again when it changes, or when the view moved to another page', () => {
    const socket = new SlowSocket();
    const outbox = new FrameOutbox(socket);
    outbox.offer(frame(1));
    socket.flush();
    outbox.offer(frame(2, { ...meta, scrollOffsetY: 100 }));
    socket.flush();
    outbox.resetMeta();
    outbox.offer(frame(3, { ...meta, scrollOffsetY: 100 }));
    socket.flush();
    expect(socket.sent.map((d) => (typeof d === 'string' ? (JSON.parse(d) as { scrollOffsetY: number }).scrollOffsetY : d.toString()))).toEqual([
      0,
      'frame1',
      100,
      'frame2',
      100,
      'frame3',
    ]);
  });

  it('stops for good after a failed write or close', () => {
    const socket = new SlowSocket();
    const outbox = new FrameOutbox(socket);
    outbox.offer(frame(1));
    outbox.offer(frame(2));
    socket.flush(new Error('reset'));
    outbox.offer(frame(3));
    expect(socket.frames()).toEqual(['frame1']);
  });
});
