import { PRESS_KEYS, type PressKeyName } from '@stageflow/pipeline';

/** What `Input.dispatchKeyEvent` needs for one key. */
export interface KeyDefinition {
  /** KeyboardEvent.key */
  key: string;
  /** KeyboardEvent.code */
  code: string;
  /** Windows virtual key code, which Chrome maps to keyCode. */
  keyCode: number;
  /** The character the key types, when it types one (Enter types "\r", which submits a form). */
  text?: string;
}

const NAMED: Readonly<Record<PressKeyName, KeyDefinition>> = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { key: 'Tab', code: 'Tab', keyCode: 9 },
  Escape: { key: 'Escape', code: 'Escape', keyCode: 27 },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
  Delete: { key: 'Delete', code: 'Delete', keyCode: 46 },
  Space: { key: ' ', code: 'Space', keyCode: 32, text: ' ' },
  ArrowUp: { key: 'ArrowUp', code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { key: 'ArrowDown', code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39 },
  Home: { key: 'Home', code: 'Home', keyCode: 36 },
  End: { key: 'End', code: 'End', keyCode: 35 },
  PageUp: { key: 'PageUp', code: 'PageUp', keyCode: 33 },
  PageDown: { key: 'PageDown', code: 'PageDown', keyCode: 34 },
};

/**
 * The key `press` sends for a YAML key: a named key, or one character typed
 * as itself (letters and digits also get their physical key code, so pages
 * that read `event.code` see a real key). The loader only lets these through.
 */
export function keyDefinition(name: string): KeyDefinition {
  if ((PRESS_KEYS as readonly string[]).includes(name)) return NAMED[name as PressKeyName];
  const upper = name.toUpperCase();
  if (/^[a-z]$/i.test(name)) return { key: name, code: `Key${upper}`, keyCode: upper.charCodeAt(0), text: name };
  if (/^[0-9]$/.test(name)) return { key: name, code: `Digit${name}`, keyCode: name.charCodeAt(0), text: name };
  return { key: name, code: '', keyCode: 0, text: name };
}
