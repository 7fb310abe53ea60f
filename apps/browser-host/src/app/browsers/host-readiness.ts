import { Injectable } from '@nestjs/common';
import { StageflowError } from '@stageflow/contracts';

/**
 * Whether the startup sweep is done. Until it is, browser-host serves `/health`
 * but no stage session: a session handed out before the sweep could be swept away.
 */
@Injectable()
export class HostReadiness {
  private isReady = false;
  private readonly waiters = new Set<() => void>();

  markReady(): void {
    this.isReady = true;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  get ready(): boolean {
    return this.isReady;
  }

  /**
   * Resolves once ready; after `timeoutMs` throws `browser_host_starting` (503) so the
   * caller (the runner) retries instead of hanging while Redis is away at boot.
   */
  async whenReady(timeoutMs: number): Promise<void> {
    if (this.isReady) return;
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    const woken = new Promise<boolean>((resolve) => {
      wake = () => resolve(true);
      this.waiters.add(wake);
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const ready = await woken;
    clearTimeout(timer);
    this.waiters.delete(wake);
    if (!ready) {
      throw new StageflowError(
        'browser_host_starting',
        'browser-host is still starting (its startup sweep has not finished; is Redis reachable?). Try again in a few seconds.',
        503,
      );
    }
  }
}
