import { keyCommands, modifierBits, mouseCommands, pasteCommands, toPagePoint, wheelCommands, type FrameMeta } from './input-mapping';

const meta: FrameMeta = { deviceWidth: 800, deviceHeight: 600, offsetTop: 0, pageScaleFactor: 1, scrollOffsetX: 0, scrollOffsetY: 240 };

describe('toPagePoint', () => {
  it('maps fractions of the picture to the page\'s CSS pixels', () => {
    expect(toPagePoint({ x: 0, y: 0 }, meta)).toEqual({ x: 0, y: 0 });
    expect(toPagePoint({ x: 0.5, y: 0.25 }, meta)).toEqual({ x: 400, y: 150 });
    expect(toPagePoint({ x: 1, y: 1 }, meta)).toEqual({ x: 800, y: 600 });
  });

  it('does not add the scroll offset: input is relative to the viewport', () => {
    expect(toPagePoint({ x: 0.5, y: 0.5 }, { ...meta, scrollOffsetY: 5000 })).toEqual({ x: 400, y: 300 });
  });

  it('divides by the page scale of a pinch-zoomed page', () => {
    expect(toPagePoint({ x: 0.25, y: 0.5 }, { ...meta, pageScaleFactor: 2 })).toEqual({ x: 100, y: 150 });
  });

  it('takes the top offset off (the picture starts above the page)', () => {
    expect(toPagePoint({ x: 0, y: 0.5 }, { ...meta, offsetTop: 56 })).toEqual({ x: 0, y: 244 });
    expect(toPagePoint({ x: 0, y: 0 }, { ...meta, offsetTop: 56 })).toEqual({ x: 0, y: 0 });
  });

  it('keeps sub-pixel precision to a hundredth and survives a zero scale', () => {
    expect(toPagePoint({ x: 1 / 3, y: 0 }, { ...meta, deviceWidth: 100 })).toEqual({ x: 33.33, y: 0 });
    expect(toPagePoint({ x: 0.5, y: 0.5 }, { ...meta, pageScaleFactor: 0 })).toEqual({ x: 400, y: 300 });
  });
});

describe('mouse input', () => {
  it('clicks: move there, press and release', () => {
    expect(mouseCommands({ type: 'mouse', action: 'click', x: 0.5, y: 0.5 }, meta).map((c) => c.params)).toEqual([
      { type: 'mouseMoved', x: 400, y: 300, modifiers: 0, button: 'none' },
      { type: 'mousePressed', x: 400, y: 300, modifiers: 0, button: 'left', clickCount: 1 },
      { type: 'mouseReleased', x: 400, y: 300, modifiers: 0, button: 'left', clickCount: 1 },
    ]);
  });

  it('double-clicks as a person does: the second press has clickCount 2', () => {
    const presses = mouseCommands({ type: 'mouse', action: 'click', x: 0, y: 0, clicks: 2 }, meta)
      .map((c) => c.params)
      .filter((p) => p['type'] === 'mousePressed');
    expect(presses.map((p) => p['clickCount'])).toEqual([1, 2]);
  });

  it('right-clicks with modifiers', () => {
    const [, press] = mouseCommands({ type: 'mouse', action: 'click', x: 0, y: 0, button: 'right', modifiers: ['Shift', 'Control'] }, meta);
    expect(press.params).toMatchObject({ button: 'right', modifiers: 10 });
  });

  it('moves, presses and releases separately for dragging', () => {
    expect(mouseCommands({ type: 'mouse', action: 'move', x: 0.1, y: 0.1 }, meta)).toHaveLength(1);
    expect(mouseCommands({ type: 'mouse', action: 'down', x: 0.1, y: 0.1 }, meta).map((c) => c.params['type'])).toEqual(['mouseMoved', 'mousePressed']);
    expect(mouseCommands({ type: 'mouse', action: 'up', x: 0.1, y: 0.1, clicks: 3 }, meta)[0].params).toMatchObject({ type: 'mouseReleased', clickCount: 3 });
  });

  it('scrolls with the wheel at a point', () => {
    expect(wheelCommands({ type: 'wheel', x: 0.5, y: 0.5, deltaX: 0, deltaY: 120 }, meta)).toEqual([
      { method: 'Input.dispatchMouseEvent', params: { type: 'mouseWheel', x: 400, y: 300, deltaX: 0, deltaY: 120, modifiers: 0 } },
    ]);
  });
});

describe('keys', () => {
  it('gives each modifier its CDP bit', () => {
    expect(modifierBits(['Alt'])).toBe(1);
    expect(modifierBits(['Control'])).toBe(2);
    expect(modifierBits(['Meta'])).toBe(4);
    expect(modifierBits(['Shift', 'Shift'])).toBe(8);
    expect(modifierBits()).toBe(0);
  });

  it('types a character: keyDown with its text, then keyUp', () => {
    expect(keyCommands({ type: 'key', action: 'press', key: 'a' }).map((c) => c.params)).toEqual([
      { type: 'keyDown', key: 'a', code: 'KeyA', windowsVirtualKeyCode: 65, modifiers: 0, text: 'a', unmodifiedText: 'a' },
      { type: 'keyUp', key: 'a', code: 'KeyA', windowsVirtualKeyCode: 65, modifiers: 0 },
    ]);
    expect(keyCommands({ type: 'key', action: 'press', key: 'é' })[0].params).toMatchObject({ type: 'keyDown', text: 'é', windowsVirtualKeyCode: 0 });
    expect(keyCommands({ type: 'key', action: 'press', key: '7' })[0].params).toMatchObject({ code: 'Digit7', windowsVirtualKeyCode: 55 });
  });

  it('sends Enter with the carriage return that submits a form', () => {
    expect(keyCommands({ type: 'key', action: 'down', key: 'Enter' })).toEqual([
      { method: 'Input.dispatchKeyEvent', params: { type: 'keyDown', key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, modifiers: 0, text: '\r', unmodifiedText: '\r' } },
    ]);
  });

  it('sends Tab, Backspace, arrows and Escape as raw keys (they type nothing)', () => {
    for (const [key, keyCode] of [['Tab', 9], ['Backspace', 8], ['ArrowLeft', 37], ['Escape', 27]] as const) {
      expect(keyCommands({ type: 'key', action: 'press', key })[0].params).toEqual({ type: 'rawKeyDown', key, code: key, windowsVirtualKeyCode: keyCode, modifiers: 0 });
    }
  });

  it('holds a modifier down and up on its own, on the left', () => {
    expect(keyCommands({ type: 'key', action: 'down', key: 'Shift', modifiers: ['Shift'] })[0].params).toMatchObject({ type: 'rawKeyDown', code: 'ShiftLeft', location: 1, modifiers: 8 });
    expect(keyCommands({ type: 'key', action: 'up', key: 'Control' })[0].params).toMatchObject({ type: 'keyUp', code: 'ControlLeft' });
  });

  it('types nothing for a chord (Control+A selects all); Shift still types', () => {
    expect(keyCommands({ type: 'key', action: 'press', key: 'a', modifiers: ['Control'] })[0].params).toEqual({
      type: 'rawKeyDown',
      key: 'a',
      code: 'KeyA',
      windowsVirtualKeyCode: 65,
      modifiers: 2,
    });
    expect(keyCommands({ type: 'key', action: 'press', key: 'A', modifiers: ['Shift'] })[0].params).toMatchObject({ type: 'keyDown', text: 'A' });
  });
});

describe('paste', () => {
  it('inserts text in batches of 200 characters, in order', () => {
    const text = 'x'.repeat(450);
    const commands = pasteCommands(text);
    expect(commands.map((c) => (c.params['text'] as string).length)).toEqual([200, 200, 50]);
    expect(commands.every((c) => c.method === 'Input.insertText')).toBe(true);
    expect(commands.map((c) => c.params['text']).join('')).toBe(text);
  });

  it('never splits a character made of two UTF-16 units', () => {
    const text = '😀'.repeat(3);
    const commands = pasteCommands(text, 2);
    expect(commands.map((c) => c.params['text'])).toEqual(['😀😀', '😀']);
  });
});
