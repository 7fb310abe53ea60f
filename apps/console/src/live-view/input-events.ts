import {
  isLiveViewKey,
  LIVE_VIEW_LIMITS,
  type LiveViewDialogAnswerMessage,
  type LiveViewDialogMessage,
  type LiveViewKeyMessage,
  type LiveViewModifier,
  type LiveViewMouseButton,
  type LiveViewMouseMessage,
  type LiveViewTextMessage,
} from '@stageflow/contracts';

interface ModifierKeys {
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
}

/** The modifiers held, as the contract names them (in its order). */
export function modifiersOf(e: ModifierKeys): LiveViewModifier[] {
  const held: LiveViewModifier[] = [];
  if (e.altKey) held.push('Alt');
  if (e.ctrlKey) held.push('Control');
  if (e.metaKey) held.push('Meta');
  if (e.shiftKey) held.push('Shift');
  return held;
}

/** `modifiers` only when one is held: the messages stay as small as a plain click or key. */
export function withModifiers<T extends object>(message: T, e: ModifierKeys): T & { modifiers?: LiveViewModifier[] } {
  const held = modifiersOf(e);
  return held.length ? { ...message, modifiers: held } : message;
}

export function buttonOf(button: number): LiveViewMouseButton | undefined {
  return button === 0 ? 'left' : button === 1 ? 'middle' : button === 2 ? 'right' : undefined;
}

/**
 * Paste (Ctrl+V, Cmd+V, Shift+Insert) is left to the browser's paste event,
 * which the view sends as text: the remote page cannot read this machine's
 * clipboard.
 */
export function isPasteShortcut(e: { key: string } & ModifierKeys): boolean {
  return ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') || (e.shiftKey && e.key === 'Insert');
}

const MODIFIER_KEYS = new Set(['Alt', 'Control', 'Meta', 'Shift']);

/**
 * A key pressed on the canvas as the relay takes it: `press` of a named key
 * (Enter, Tab, Backspace, arrows, Escape, …) or of one printable character,
 * with the modifiers held. `undefined` for what the contract has no word for
 * (F-keys, dead keys, IME composition) and for a modifier pressed alone: the
 * modifiers ride on the key or click they change.
 */
export function keyMessage(e: { key: string; isComposing?: boolean } & ModifierKeys): LiveViewKeyMessage | undefined {
  if (e.isComposing || MODIFIER_KEYS.has(e.key) || !isLiveViewKey(e.key)) return undefined;
  return withModifiers({ type: 'key' as const, action: 'press' as const, key: e.key }, e);
}

/**
 * Pasted text as `text` messages of at most {@link LIVE_VIEW_LIMITS.maxTextChars}
 * UTF-16 units each (the relay's bound), never splitting a surrogate pair; line
 * ends as `\n`.
 */
export function textMessages(text: string, max: number = LIVE_VIEW_LIMITS.maxTextChars): LiveViewTextMessage[] {
  const out: LiveViewTextMessage[] = [];
  let chunk = '';
  for (const char of text.replace(/\r\n?/g, '\n')) {
    if (chunk.length + char.length > max) {
      out.push({ type: 'text', text: chunk });
      chunk = '';
    }
    chunk += char;
  }
  if (chunk) out.push({ type: 'text', text: chunk });
  return out;
}

/**
 * The answer to a page dialog. A prompt accepted with its default text unchanged
 * leaves `promptText` out, so the relay sends the page's own default; anything
 * typed is sent as typed (an emptied box is an empty answer).
 */
export function dialogAnswer(dialog: Pick<LiveViewDialogMessage, 'id' | 'kind' | 'defaultPrompt'>, action: 'accept' | 'dismiss', typed?: string): LiveViewDialogAnswerMessage {
  const edited = action === 'accept' && dialog.kind === 'prompt' && typed !== undefined && typed !== (dialog.defaultPrompt ?? '');
  return edited ? { type: 'dialog', id: dialog.id, action, promptText: typed } : { type: 'dialog', id: dialog.id, action };
}

/** Two left clicks this close in time (and in place) are one double click. */
export const DOUBLE_CLICK_MS = 400;
const DOUBLE_CLICK_DISTANCE_PX = 6;

export interface ClickTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Turns the operator's clicks into `mouse` `click` messages. A double click
 * must reach the page as exactly what a person's does (two clicks and one
 * `dblclick`), and the relay's `click` with `clicks: 2` is exactly that. So a
 * left click waits {@link DOUBLE_CLICK_MS} for a second one before it is sent
 * as a single click; a second one in time makes the pair one `clicks: 2`
 * message. Any other input flushes a waiting click first, so a click then
 * typing reach the page in that order. Right and middle clicks go at once.
 */
export class ClickSequencer {
  private pending?: { message: LiveViewMouseMessage; clientX: number; clientY: number; timer: unknown };

  constructor(
    private readonly send: (message: LiveViewMouseMessage) => void,
    private readonly timers: ClickTimers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>) },
  ) {}

  /** A click at `message`'s point (`clientX`/`clientY`: where on this screen, to tell a double click from two clicks apart). */
  click(message: LiveViewMouseMessage, clientX: number, clientY: number): void {
    if ((message.button ?? 'left') !== 'left') {
      this.flush();
      return this.send(message);
    }
    const first = this.pending;
    if (first && Math.hypot(clientX - first.clientX, clientY - first.clientY) <= DOUBLE_CLICK_DISTANCE_PX) {
      this.timers.clearTimeout(first.timer);
      this.pending = undefined;
      return this.send({ ...first.message, clicks: 2 });
    }
    this.flush();
    const timer = this.timers.setTimeout(() => {
      if (this.pending?.timer !== timer) return;
      this.pending = undefined;
      this.send(message);
    }, DOUBLE_CLICK_MS);
    this.pending = { message, clientX, clientY, timer };
  }

  /** Whether a click waits to learn whether it is a double click. */
  get waiting(): boolean {
    return this.pending !== undefined;
  }

  /** Sends a waiting click now (before other input). */
  flush(): void {
    const pending = this.pending;
    if (!pending) return;
    this.timers.clearTimeout(pending.timer);
    this.pending = undefined;
    this.send(pending.message);
  }

  /** Drops a waiting click (the view closed). */
  cancel(): void {
    if (this.pending) this.timers.clearTimeout(this.pending.timer);
    this.pending = undefined;
  }
}
