import { KeyedMutex } from './keyed-mutex';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedMutex', () => {
  it('runs holders of one key one at a time, in arrival order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    let releaseFirst!: () => void;
    const first = mutex.run('k', async () => {
      log.push('first in');
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      log.push('first out');
    });
    const second = mutex.run('k', async () => void log.push('second'));
    await tick();
    expect(log).toEqual(['first in']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(log).toEqual(['first in', 'first out', 'second']);
    expect(mutex.size).toBe(0);
  });

  it('lets different keys run at once', async () => {
    const mutex = new KeyedMutex();
    let release!: () => void;
    const blocked = mutex.run('a', () => new Promise<void>((resolve) => (release = resolve)));
    await expect(mutex.run('b', async () => 'b ran')).resolves.toBe('b ran');
    release();
    await blocked;
  });

  it('does not let a failing holder block the next one', async () => {
    const mutex = new KeyedMutex();
    const failing = mutex.run('k', async () => {
      throw new Error('launch failed');
    });
    const next = mutex.run('k', async () => 'next ran');
    await expect(failing).rejects.toThrow('launch failed');
    await expect(next).resolves.toBe('next ran');
  });
});
