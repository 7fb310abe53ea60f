import { LIVE_VIEW_LIMITS, type LiveViewMouseMessage } from '@stageflow/contracts';
import { buttonOf, ClickSequencer, dialogAnswer, DOUBLE_CLICK_MS, isPasteShortcut, keyMessage, modifiersOf, textMessages } from './input-events';

const keys = { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false };
const click = (x: number, y: number, extra: Partial<LiveViewMouseMessage> = {}): LiveViewMouseMessage => ({ type: 'mouse', action: 'click', x, y, ...extra });

describe('input sent to the live view', () => {
  it('names the modifiers as the contract does', () => {
    expect(modifiersOf(keys)).toEqual([]);
    expect(modifiersOf({ ...keys, ctrlKey: true, shiftKey: true })).toEqual(['Control', 'Shift']);
    expect(modifiersOf({ altKey: true, ctrlKey: true, metaKey: true, shiftKey: true })).toEqual(['Alt', 'Control', 'Meta', 'Shift']);
  });

  it('presses named keys and printable characters, with their modifiers; leaves out what the contract has no word for', () => {
    expect(keyMessage({ ...keys, key: 'Tab', shiftKey: true })).toEqual({ type: 'key', action: 'press', key: 'Tab', modifiers: ['Shift'] });
    for (const key of ['Enter', 'Backspace', 'Escape', 'ArrowLeft', 'Delete', 'Home', 'PageDown']) {
      expect(keyMessage({ ...keys, key })).toEqual({ type: 'key', action: 'press', key });
    }
    expect(keyMessage({ ...keys, key: 'A', shiftKey: true })).toEqual({ type: 'key', action: 'press', key: 'A', modifiers: ['Shift'] });
    expect(keyMessage({ ...keys, key: ' ' })).toEqual({ type: 'key', action: 'press', key: ' ' });
    expect(keyMessage({ ...keys, key: 'a', ctrlKey: true })).toEqual({ type: 'key', action: 'press', key: 'a', modifiers: ['Control'] });
    // A modifier alone rides on the next key; F-keys, dead keys and IME composition are not sent.
    for (const key of ['Shift', 'Control', 'F5', 'Dead', 'Unidentified', 'CapsLock']) expect(keyMessage({ ...keys, key })).toBeUndefined();
    expect(keyMessage({ ...keys, key: 'a', isComposing: true })).toBeUndefined();
  });

  it('maps mouse buttons, and leaves paste shortcuts to the paste event', () => {
    expect([0, 1, 2, 3].map(buttonOf)).toEqual(['left', 'middle', 'right', undefined]);
    expect(isPasteShortcut({ ...keys, key: 'v', ctrlKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'V', metaKey: true, shiftKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'Insert', shiftKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'v' })).toBe(false);
  });

  it('splits a paste into text messages at the relay\'s limit without splitting a character', () => {
    const max = LIVE_VIEW_LIMITS.maxTextChars;
    expect(textMessages('hello')).toEqual([{ type: 'text', text: 'hello' }]);
    const long = 'x'.repeat(max - 1) + '😀' + 'y'.repeat(max) + '\r\nend';
    const messages = textMessages(long);
    expect(messages.map((m) => m.text.length)).toEqual([max - 1, max, 6]); // the emoji starts the second: 2 + 9998 y; then "yy\nend"
    expect(messages.map((m) => m.text).join('')).toBe(long.replace('\r\n', '\n'));
    for (const m of messages) expect(m.text.length).toBeLessThanOrEqual(max);
    expect(textMessages('')).toEqual([]);
  });
});

describe('answers to page dialogs', () => {
  const prompt = { id: 7, kind: 'prompt' as const, defaultPrompt: 'Ada' };

  it('leaves a prompt\'s default to the relay when it was not edited, and sends what was typed otherwise', () => {
    expect(dialogAnswer(prompt, 'accept', 'Ada')).toEqual({ type: 'dialog', id: 7, action: 'accept' });
    expect(dialogAnswer(prompt, 'accept', 'Grace')).toEqual({ type: 'dialog', id: 7, action: 'accept', promptText: 'Grace' });
    expect(dialogAnswer(prompt, 'accept', '')).toEqual({ type: 'dialog', id: 7, action: 'accept', promptText: '' });
    expect(dialogAnswer({ id: 8, kind: 'prompt' }, 'accept', '')).toEqual({ type: 'dialog', id: 8, action: 'accept' });
    expect(dialogAnswer(prompt, 'dismiss', 'Grace')).toEqual({ type: 'dialog', id: 7, action: 'dismiss' });
    expect(dialogAnswer({ id: 9, kind: 'confirm' }, 'accept')).toEqual({ type: 'dialog', id: 9, action: 'accept' });
  });
});

describe('clicks and double clicks', () => {
  let sent: LiveViewMouseMessage[];
  let clicks: ClickSequencer;

  beforeEach(() => {
    jest.useFakeTimers();
    sent = [];
    clicks = new ClickSequencer((m) => sent.push(m));
  });
  afterEach(() => jest.useRealTimers());

  it('sends a single click once it is clear no second click follows', () => {
    clicks.click(click(0.5, 0.5), 100, 100);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS);
    expect(sent).toEqual([click(0.5, 0.5)]);
  });

  it('sends a double click as one click with clicks: 2, and nothing else (the page sees one dblclick, two clicks)', () => {
    clicks.click(click(0.5, 0.5), 100, 100);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS - 100);
    clicks.click(click(0.5001, 0.5), 101, 100);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS * 2);
    expect(sent).toEqual([click(0.5, 0.5, { clicks: 2 })]);
  });

  it('keeps two clicks apart in time or place as two clicks', () => {
    clicks.click(click(0.1, 0.1), 10, 10);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS + 1);
    clicks.click(click(0.1, 0.1), 10, 10);
    clicks.click(click(0.9, 0.9), 300, 300);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS);
    expect(sent).toEqual([click(0.1, 0.1), click(0.1, 0.1), click(0.9, 0.9)]);
  });

  it('sends right and middle clicks at once, and a waiting click before other input', () => {
    clicks.click(click(0.2, 0.2), 10, 10);
    clicks.click(click(0.3, 0.3, { button: 'right' }), 10, 10);
    expect(sent).toEqual([click(0.2, 0.2), click(0.3, 0.3, { button: 'right' })]);
    clicks.click(click(0.4, 0.4), 10, 10);
    expect(clicks.waiting).toBe(true);
    clicks.flush();
    expect(sent).toHaveLength(3);
    jest.advanceTimersByTime(DOUBLE_CLICK_MS * 2);
    expect(sent).toHaveLength(3);
    clicks.click(click(0.4, 0.4), 10, 10);
    clicks.cancel();
    jest.advanceTimersByTime(DOUBLE_CLICK_MS * 2);
    expect(sent).toHaveLength(3);
  });
});
