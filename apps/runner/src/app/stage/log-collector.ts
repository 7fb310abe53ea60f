import { StringDecoder } from 'node:string_decoder';
import type { LogLine } from '@stageflow/engine';

/** Bounds on what one stage attempt may log. */
export interface LogLimits {
  /** Characters kept of one line; the rest is replaced by a marker. @defaultValue 4096 */
  maxLineChars: number;
  /** `stage.log` events per attempt; then one "log truncated" line and silence. @defaultValue 2000 */
  maxEvents: number;
  /** Lines kept as the stage's `logTail` (counted after the event cap too). @defaultValue 100 */
  tailLines: number;
}

export const DEFAULT_LOG_LIMITS: LogLimits = { maxLineChars: 4096, maxEvents: 2000, tailLines: 100 };

type Stream = LogLine['stream'];

interface StreamState {
  decoder: StringDecoder;
  partial: string;
  /** The current line grew past the cap: drop the rest of it. */
  overflow: boolean;
}

/**
 * Turns a stage's stdout/stderr chunks into bounded log lines. A stage that
 * prints forever, or one huge line, costs at most `maxEvents` events of at
 * most `maxLineChars` characters each, and a fixed-size tail.
 */
export class LogCollector {
  private readonly streams: Record<Stream, StreamState> = {
    stdout: { decoder: new StringDecoder('utf8'), partial: '', overflow: false },
    stderr: { decoder: new StringDecoder('utf8'), partial: '', overflow: false },
  };
  private readonly pending: LogLine[] = [];
  private readonly lastLines: string[] = [];
  private emitted = 0;
  private truncated = false;

  constructor(private readonly limits: LogLimits = DEFAULT_LOG_LIMITS) {}

  push(stream: Stream, chunk: Buffer | string): void {
    const state = this.streams[stream];
    const text = typeof chunk === 'string' ? chunk : state.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      this.append(state, text.slice(start, nl));
      this.line(stream, state);
      start = nl + 1;
    }
    this.append(state, text.slice(start));
  }

  /** The streams ended: a last line without a newline still counts. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const state = this.streams[stream];
      this.append(state, state.decoder.end());
      if (state.partial || state.overflow) this.line(stream, state);
    }
  }

  /** Lines not yet handed out, oldest first. */
  drain(): LogLine[] {
    return this.pending.splice(0, this.pending.length);
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  /** The last `tailLines` lines (stream-interleaved, as they arrived). */
  tail(): string[] {
    return [...this.lastLines];
  }

  private append(state: StreamState, text: string): void {
    if (!text || state.overflow) return;
    const room = this.limits.maxLineChars - state.partial.length;
    if (text.length > room) {
      state.partial += text.slice(0, room);
      state.overflow = true;
    } else {
      state.partial += text;
    }
  }

  private line(stream: Stream, state: StreamState): void {
    const line = state.overflow ? `${state.partial}… [line truncated]` : state.partial.replace(/\r$/, '');
    state.partial = '';
    state.overflow = false;
    this.lastLines.push(line);
    if (this.lastLines.length > this.limits.tailLines) this.lastLines.shift();
    if (this.emitted < this.limits.maxEvents) {
      this.pending.push({ stream, line });
      this.emitted++;
    } else if (!this.truncated) {
      this.truncated = true;
      this.pending.push({
        stream,
        line: `[stageflow] log truncated: more than ${this.limits.maxEvents} lines; further output is not streamed (the stage's log tail keeps the last ${this.limits.tailLines})`,
      });
    }
  }
}
