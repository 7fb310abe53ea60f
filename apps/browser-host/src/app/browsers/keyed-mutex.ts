/**
 * One holder per key, in this process: concurrent first requests for the same
 * (run, profile) must start one browser, and a session is never opened and closed
 * at the same time. Waiters run in arrival order; a failing holder does not block them.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      // The last holder leaves no entry behind.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys held or waited for right now (for tests and diagnostics). */
  get size(): number {
    return this.tails.size;
  }
}
