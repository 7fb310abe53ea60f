import { Inject, Injectable } from '@nestjs/common';
import type { RelayConfig } from '@stageflow/config';
import { parseReopenedStageSession, reopenSessionRoute, StageflowError, type ReopenedStageSession } from '@stageflow/contracts';
import { SERVICE_CONFIG } from './service-config';

/** Opening a tab and loading its address can take a while on a busy Host. */
const REOPEN_TIMEOUT_MS = 30_000;

/** browser-host's internal API, as far as the relay needs it: "Reopen browser tab". */
@Injectable()
export class BrowserHostClient {
  private readonly base: string;

  constructor(@Inject(SERVICE_CONFIG) config: Pick<RelayConfig, 'browserHostUrl'>) {
    this.base = config.browserHostUrl;
  }

  /** @throws StageflowError with browser-host's code (`reopen_too_soon` 429, `session_not_found`, `reopen_failed`) or `browser_host_unavailable`. */
  async reopen(sessionId: string): Promise<ReopenedStageSession> {
    const url = `${this.base}${reopenSessionRoute(sessionId)}`;
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(REOPEN_TIMEOUT_MS) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new StageflowError(
        'browser_host_unavailable',
        `browser-host at ${this.base} did not answer (${cause}). Is it running, and is STAGEFLOW_BROWSER_HOST_URL right?`,
        502,
      );
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const error = body as { code?: unknown; message?: unknown } | undefined;
      throw new StageflowError(
        typeof error?.code === 'string' ? error.code : 'reopen_failed',
        typeof error?.message === 'string' ? error.message : `browser-host answered ${res.status}.`,
        res.status,
      );
    }
    return parseReopenedStageSession(body);
  }
}
