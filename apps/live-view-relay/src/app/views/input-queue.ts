import type { InputCommand } from './input-mapping';

/** Input for one page session, in order. */
export interface QueuedInput {
  sessionId: string;
  commands: InputCommand[];
  /** A mouse move: replaced by a newer move while it waits (hovering makes many). */
  move?: boolean;
}

/** Commands waiting at most; more input is refused until the page catches up. */
export const MAX_QUEUED_COMMANDS = 400;

/**
 * Sends input to the page one command at a time, in order. A command the page does
 * not acknowledge in time (a click that opened a dialog waits for the dialog) does
 * not hold the queue: the next one is sent after `commandTimeoutMs`, and Chrome keeps
 * them in order itself.
 */
export class InputQueue {
  private readonly items: QueuedInput[] = [];
  private running = false;
  private closed = false;
  /** Ends the wait for the command in flight (close does not wait for the page). */
  private stopWaiting?: () => void;

  constructor(
    private readonly send: (sessionId: string, command: InputCommand) => Promise<unknown>,
    private readonly commandTimeoutMs: number,
  ) {}

  /** Queues input; false when the queue is full (the caller tells the viewer). */
  push(input: QueuedInput): boolean {
    if (this.closed) return false;
    const last = this.items[this.items.length - 1];
    if (input.move && last?.move && last.sessionId === input.sessionId) {
      this.items[this.items.length - 1] = input;
      return true;
    }
    const waiting = this.items.reduce((n, item) => n + item.commands.length, 0);
    if (waiting + input.commands.length > MAX_QUEUED_COMMANDS) return false;
    this.items.push(input);
    void this.run();
    return true;
  }

  /** Drops what waits for this session (its page went away). */
  dropSession(sessionId: string): void {
    for (let i = this.items.length - 1; i >= 0; i--) if (this.items[i].sessionId === sessionId) this.items.splice(i, 1);
  }

  close(): void {
    this.closed = true;
    this.items.length = 0;
    this.stopWaiting?.();
  }

  get size(): number {
    return this.items.length;
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let item = this.items.shift(); item && !this.closed; item = this.items.shift()) {
        for (const command of item.commands) {
          if (this.closed) return;
          await this.bounded(this.send(item.sessionId, command));
        }
      }
    } finally {
      this.running = false;
    }
  }

  private bounded(work: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.stopWaiting = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.commandTimeoutMs);
      this.stopWaiting = done;
      work.then(done, done);
    });
  }
}
