import {
  LIVE_VIEW_LIMITS,
  type LiveViewFrameMetaMessage,
  type LiveViewKeyMessage,
  type LiveViewModifier,
  type LiveViewMouseMessage,
  type LiveViewWheelMessage,
} from '@stageflow/contracts';

/** The geometry of the picture a viewer clicks on (a screencast frame's metadata). */
export type FrameMeta = Omit<LiveViewFrameMetaMessage, 'type'>;

/** One CDP input command, sent on the shown page's session. */
export interface InputCommand {
  method: 'Input.dispatchMouseEvent' | 'Input.dispatchKeyEvent' | 'Input.insertText';
  params: Record<string, unknown>;
}

/**
 * A point of the picture (fractions of its width and height) in the page's CSS pixels,
 * as `Input.dispatchMouseEvent` takes them. The picture shows `deviceWidth ×
 * deviceHeight` DIPs, the page starting `offsetTop` DIPs down; a pinch-zoomed page
 * (`pageScaleFactor` > 1) shows fewer CSS pixels in the same DIPs (checked against
 * Chromium 156: at scale 2, x = 100 lands on clientX 100 of the zoomed page).
 */
export function toPagePoint(point: { x: number; y: number }, meta: FrameMeta): { x: number; y: number } {
  const scale = meta.pageScaleFactor > 0 ? meta.pageScaleFactor : 1;
  const x = (point.x * meta.deviceWidth) / scale;
  const y = (point.y * meta.deviceHeight - meta.offsetTop) / scale;
  return { x: round(Math.max(0, x)), y: round(Math.max(0, y)) };
}

const MODIFIER_BITS: Record<LiveViewModifier, number> = { Alt: 1, Control: 2, Meta: 4, Shift: 8 };

/** CDP's modifier bit field. */
export function modifierBits(modifiers: readonly LiveViewModifier[] = []): number {
  return [...new Set(modifiers)].reduce((bits, m) => bits | MODIFIER_BITS[m], 0);
}

export function mouseCommands(message: LiveViewMouseMessage, meta: FrameMeta): InputCommand[] {
  const { x, y } = toPagePoint(message, meta);
  const modifiers = modifierBits(message.modifiers);
  const button = message.button ?? 'left';
  const mouse = (params: Record<string, unknown>): InputCommand => ({
    method: 'Input.dispatchMouseEvent',
    params: { x, y, modifiers, ...params },
  });
  const moved = mouse({ type: 'mouseMoved', button: 'none' });
  switch (message.action) {
    case 'move':
      return [moved];
    case 'down':
      return [moved, mouse({ type: 'mousePressed', button, clickCount: message.clicks ?? 1 })];
    case 'up':
      return [mouse({ type: 'mouseReleased', button, clickCount: message.clicks ?? 1 })];
    case 'click': {
      // A double click is what a person does: two clicks, the second with clickCount 2.
      const commands = [moved];
      for (let count = 1; count <= (message.clicks ?? 1); count++) {
        commands.push(mouse({ type: 'mousePressed', button, clickCount: count }), mouse({ type: 'mouseReleased', button, clickCount: count }));
      }
      return commands;
    }
  }
}

export function wheelCommands(message: LiveViewWheelMessage, meta: FrameMeta): InputCommand[] {
  const { x, y } = toPagePoint(message, meta);
  return [
    {
      method: 'Input.dispatchMouseEvent',
      params: { type: 'mouseWheel', x, y, deltaX: message.deltaX, deltaY: message.deltaY, modifiers: modifierBits(message.modifiers) },
    },
  ];
}

interface KeyDefinition {
  code: string;
  keyCode: number;
  /** What the key types (Enter types "\r", which submits a form). */
  text?: string;
  location?: number;
}

const NAMED_KEYS: Record<string, KeyDefinition> = {
  Enter: { code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { code: 'Tab', keyCode: 9 },
  Backspace: { code: 'Backspace', keyCode: 8 },
  Delete: { code: 'Delete', keyCode: 46 },
  Escape: { code: 'Escape', keyCode: 27 },
  ArrowUp: { code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { code: 'ArrowRight', keyCode: 39 },
  Home: { code: 'Home', keyCode: 36 },
  End: { code: 'End', keyCode: 35 },
  PageUp: { code: 'PageUp', keyCode: 33 },
  PageDown: { code: 'PageDown', keyCode: 34 },
  Shift: { code: 'ShiftLeft', keyCode: 16, location: 1 },
  Control: { code: 'ControlLeft', keyCode: 17, location: 1 },
  Alt: { code: 'AltLeft', keyCode: 18, location: 1 },
  Meta: { code: 'MetaLeft', keyCode: 91, location: 1 },
};

/** A key's definition: a named key, or a printable character (US layout codes for letters, digits and space). */
export function keyDefinition(key: string): KeyDefinition {
  const named = NAMED_KEYS[key];
  if (named) return named;
  if (/^[a-z]$/i.test(key)) return { code: `Key${key.toUpperCase()}`, keyCode: key.toUpperCase().charCodeAt(0), text: key };
  if (/^[0-9]$/.test(key)) return { code: `Digit${key}`, keyCode: key.charCodeAt(0), text: key };
  if (key === ' ') return { code: 'Space', keyCode: 32, text: ' ' };
  return { code: '', keyCode: 0, text: key };
}

/**
 * A key press as Chrome expects it. With Control, Alt or Meta held a character
 * types nothing (Control+A selects all, Control+V pastes from the page's own
 * clipboard): its down is a `rawKeyDown`.
 */
export function keyCommands(message: LiveViewKeyMessage): InputCommand[] {
  const def = keyDefinition(message.key);
  const modifiers = modifierBits(message.modifiers);
  const chord = (modifiers & (MODIFIER_BITS.Alt | MODIFIER_BITS.Control | MODIFIER_BITS.Meta)) !== 0;
  const base = { key: message.key, code: def.code, windowsVirtualKeyCode: def.keyCode, modifiers, ...(def.location ? { location: def.location } : {}) };
  const text = !chord ? def.text : undefined;
  const down: InputCommand = {
    method: 'Input.dispatchKeyEvent',
    params: text ? { type: 'keyDown', ...base, text, unmodifiedText: text } : { type: 'rawKeyDown', ...base },
  };
  const up: InputCommand = { method: 'Input.dispatchKeyEvent', params: { type: 'keyUp', ...base } };
  if (message.action === 'down') return [down];
  if (message.action === 'up') return [up];
  return [down, up];
}

/**
 * A paste, typed in batches of {@link LIVE_VIEW_LIMITS.pasteBatchChars} characters
 * (`Input.insertText`): one huge insert can stall a page's input handlers, and a
 * batch never splits a character in two.
 */
export function pasteCommands(text: string, batchChars: number = LIVE_VIEW_LIMITS.pasteBatchChars): InputCommand[] {
  const chars = [...text];
  const commands: InputCommand[] = [];
  for (let i = 0; i < chars.length; i += batchChars) {
    commands.push({ method: 'Input.insertText', params: { text: chars.slice(i, i + batchChars).join('') } });
  }
  return commands;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
