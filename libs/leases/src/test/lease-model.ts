/**
 * Test oracle: the lease rules of one profile as plain data, written from the
 * design rather than from the Lua. Integration tests run random operations on
 * Redis and on this model and compare the two. `counter` mirrors the fence
 * counter (INCR for every grant and every queue entry) on a fresh prefix.
 */
export type ModelAcquire =
  | { status: 'granted'; token: number }
  | { status: 'queued'; position: number; ticket: number; holder: string };

export class LeaseModel {
  holder?: { runId: string; token: number };
  queue: { runId: string; ticket: number }[] = [];
  private counter = 0;

  acquire(runId: string): ModelAcquire {
    if (this.holder?.runId === runId) return { status: 'granted', token: this.holder.token };
    if (!this.holder) return { status: 'granted', token: this.grant(runId) };
    let at = this.queue.findIndex((w) => w.runId === runId);
    if (at < 0) {
      this.queue.push({ runId, ticket: ++this.counter });
      at = this.queue.length - 1;
    }
    return { status: 'queued', position: at + 1, ticket: this.queue[at].ticket, holder: this.holder.runId };
  }

  release(runId: string): boolean {
    if (this.holder?.runId !== runId) return false;
    this.holder = undefined;
    this.serveHead();
    return true;
  }

  withdraw(runId: string): boolean {
    const before = this.queue.length;
    this.queue = this.queue.filter((w) => w.runId !== runId);
    return this.queue.length < before;
  }

  reclaim(dead: ReadonlySet<string>): void {
    if (this.holder && dead.has(this.holder.runId)) this.holder = undefined;
    this.queue = this.queue.filter((w) => !dead.has(w.runId));
    this.serveHead();
  }

  private serveHead(): void {
    if (this.holder) return;
    const head = this.queue.shift();
    if (head) this.grant(head.runId);
  }

  private grant(runId: string): number {
    this.holder = { runId, token: ++this.counter };
    return this.holder.token;
  }
}
