import { buttonOf, isPasteShortcut, keyMessage, modifiersOf, TEXT_BATCH, textMessages } from './input-events';

const keys = { altKey: false, ctrlKey: false, metaKey: false, shiftKey: false };

describe('input sent to the live view', () => {
  it('uses CDP modifier bits', () => {
    expect(modifiersOf(keys)).toBe(0);
    expect(modifiersOf({ ...keys, altKey: true })).toBe(1);
    expect(modifiersOf({ ...keys, ctrlKey: true, shiftKey: true })).toBe(10);
    expect(modifiersOf({ altKey: true, ctrlKey: true, metaKey: true, shiftKey: true })).toBe(15);
    expect(keyMessage('down', { ...keys, key: 'Tab', code: 'Tab', shiftKey: true })).toEqual({ type: 'key', action: 'down', key: 'Tab', code: 'Tab', modifiers: 8 });
  });

  it('maps mouse buttons, and leaves paste shortcuts to the paste event', () => {
    expect([0, 1, 2, 3].map(buttonOf)).toEqual(['left', 'middle', 'right', undefined]);
    expect(isPasteShortcut({ ...keys, key: 'v', ctrlKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'V', metaKey: true, shiftKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'Insert', shiftKey: true })).toBe(true);
    expect(isPasteShortcut({ ...keys, key: 'v' })).toBe(false);
  });

  it('sends a long paste in small batches without splitting characters', () => {
    const text = '😀'.repeat(TEXT_BATCH + 10) + '\r\nend';
    const messages = textMessages(text);
    expect(messages).toHaveLength(2);
    const joined = messages.map((m) => (m.type === 'text' ? m.text : '')).join('');
    expect(joined).toBe('😀'.repeat(TEXT_BATCH + 10) + '\nend');
    for (const m of messages) expect(JSON.stringify(m).length).toBeLessThan(4096);
    expect(textMessages('')).toEqual([]);
  });
});
