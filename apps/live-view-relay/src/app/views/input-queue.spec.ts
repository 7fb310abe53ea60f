import { InputQueue, MAX_QUEUED_COMMANDS } from './input-queue';
import type { InputCommand } from './input-mapping';

const cmd = (label: string): InputCommand => ({ method: 'Input.dispatchKeyEvent', params: { label } });

afterEach(() => jest.useRealTimers());

describe('InputQueue', () => {
  it('sends commands one at a time, in order', async () => {
    const sent: string[] = [];
    let release: () => void = () => undefined;
    const queue = new InputQueue(async (_s, c) => {
      sent.push(c.params['label'] as string);
      await new Promise<void>((resolve) => (release = resolve));
    }, 10_000);
    queue.push({ sessionId: 'S', commands: [cmd('a'), cmd('b')] });
    queue.push({ sessionId: 'S', commands: [cmd('c')] });
    expect(sent).toEqual(['a']);
    for (const expected of [['a', 'b'], ['a', 'b', 'c']]) {
      release();
      await new Promise((resolve) => setImmediate(resolve));
      expect(sent).toEqual(expected);
    }
    queue.close();
  });

  it('does not let a command the page never acknowledges (a click that opened a dialog) hold the rest', async () => {
    jest.useFakeTimers();
    const sent: string[] = [];
    const queue = new InputQueue(async (_s, c) => {
      sent.push(c.params['label'] as string);
      if (c.params['label'] === 'click') await new Promise(() => undefined);
    }, 2000);
    queue.push({ sessionId: 'S', commands: [cmd('click'), cmd('after')] });
    await jest.advanceTimersByTimeAsync(1999);
    expect(sent).toEqual(['click']);
    await jest.advanceTimersByTimeAsync(1);
    expect(sent).toEqual(['click', 'after']);
    queue.close();
  });

  it('keeps only the newest of waiting mouse moves', async () => {
    const sent: string[] = [];
    let release: () => void = () => undefined;
    const queue = new InputQueue(async (_s, c) => {
      sent.push(c.params['label'] as string);
      await new Promise<void>((resolve) => (release = resolve));
    }, 10_000);
    queue.push({ sessionId: 'S', commands: [cmd('down')] });
    for (let i = 1; i <= 5; i++) queue.push({ sessionId: 'S', commands: [cmd(`move${i}`)], move: true });
    expect(queue.size).toBe(1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['down', 'move5']);
    queue.close();
  });

  it('refuses input beyond its bound, and drops what waits for a page that went away', () => {
    const queue = new InputQueue(() => new Promise(() => undefined), 10_000);
    expect(queue.push({ sessionId: 'S', commands: [cmd('first')] })).toBe(true);
    expect(queue.push({ sessionId: 'P', commands: Array.from({ length: MAX_QUEUED_COMMANDS }, (_, i) => cmd(`${i}`)) })).toBe(true);
    expect(queue.push({ sessionId: 'S', commands: [cmd('one too many')] })).toBe(false);
    queue.dropSession('P');
    expect(queue.push({ sessionId: 'S', commands: [cmd('fits again')] })).toBe(true);
    queue.close();
    expect(queue.push({ sessionId: 'S', commands: [cmd('closed')] })).toBe(false);
  });
});
