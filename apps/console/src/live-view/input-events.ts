import type { LiveViewClientMessage, MouseButton } from './live-view.protocol';

/** CDP's modifier bits (Input.dispatchKeyEvent / dispatchMouseEvent): Alt 1, Ctrl 2, Meta 4, Shift 8. */
export function modifiersOf(e: { altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean }): number {
  return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
}

export function buttonOf(button: number): MouseButton | undefined {
  return button === 0 ? 'left' : button === 1 ? 'middle' : button === 2 ? 'right' : undefined;
}

/**
 * Paste (Ctrl+V, Cmd+V, Shift+Insert) is left to the browser's paste event,
 * which the view sends as text: the remote page cannot read this machine's
 * clipboard.
 */
export function isPasteShortcut(e: { key: string; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean }): boolean {
  return ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'v') || (e.shiftKey && e.key === 'Insert');
}

export function keyMessage(
  action: 'down' | 'up',
  e: { key: string; code: string; altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean },
): LiveViewClientMessage {
  return { type: 'key', action, key: e.key, code: e.code, modifiers: modifiersOf(e) };
}

/** Characters per `text` message: a long paste goes in small batches, so no message nears a frame limit. */
export const TEXT_BATCH = 256;

/** Pasted text as `text` messages of at most TEXT_BATCH characters, never splitting a surrogate pair. */
export function textMessages(text: string): LiveViewClientMessage[] {
  const chars = Array.from(text.replace(/\r\n?/g, '\n'));
  const out: LiveViewClientMessage[] = [];
  for (let i = 0; i < chars.length; i += TEXT_BATCH) out.push({ type: 'text', text: chars.slice(i, i + TEXT_BATCH).join('') });
  return out;
}
