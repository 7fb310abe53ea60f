import { Inject, Injectable } from '@nestjs/common';
import type { RunnerConfig } from '@stageflow/config';
import {
  BROWSER_SESSION_ROUTES,
  LoginCheckRequest,
  LoginCheckResult,
  loginCheckRoute,
  OpenStageSessionRequest,
  StageActivityReport,
  StageSession,
} from '@stageflow/contracts';
import { RUNNER_CONFIG } from '../runner.tokens';

/** browser-host refused or could not be asked; `code` is its stable error code (or `browser_host_unavailable`). */
export class BrowserHostError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'BrowserHostError';
  }
}

/** Opening a session launches Chromium on first use; closing is quick. */
const OPEN_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 10_000;
/** A login check loads a page (browser-host gives it 30 s) and may wait for a selector. */
const CHECK_TIMEOUT_MS = 45_000;

/**
 * The runner's side of the stage-session contract (docs/browser-sessions.md):
 * HTTP to browser-host's internal routes. The only place the runner talks to
 * browser-host, so tests replace it.
 */
@Injectable()
export class BrowserHostClient {
  private readonly base: string;

  constructor(@Inject(RUNNER_CONFIG) config: Pick<RunnerConfig, 'browserHostUrl'>) {
    this.base = config.browserHostUrl.replace(/\/+$/, '');
  }

  /** Opens the stage's tab (and the run's shared browser on first use). Throws {@link BrowserHostError}. */
  async open(request: OpenStageSessionRequest): Promise<StageSession> {
    const res = await this.call('POST', BROWSER_SESSION_ROUTES.open, OPEN_TIMEOUT_MS, request);
    if (res.status !== 201) throw await this.refusal(res);
    const session = (await res.json()) as StageSession;
    if (typeof session?.sessionId !== 'string' || typeof session.env !== 'object' || session.env === null) {
      throw new BrowserHostError('browser_host_bad_reply', res.status, 'browser-host answered without a session id or env');
    }
    return session;
  }

  /** Runs the stage's login check in its tab. Throws {@link BrowserHostError} (e.g. `login_check_unreachable`). */
  async check(sessionId: string, criteria: LoginCheckRequest): Promise<LoginCheckResult> {
    const res = await this.call('POST', loginCheckRoute(sessionId), CHECK_TIMEOUT_MS, criteria);
    if (res.status !== 200) throw await this.refusal(res);
    const result = (await res.json()) as LoginCheckResult;
    if (typeof result?.logged_in !== 'boolean' || typeof result.url !== 'string') {
      throw new BrowserHostError('browser_host_bad_reply', res.status, 'browser-host answered the login check without logged_in and url');
    }
    return { logged_in: result.logged_in, url: result.url };
  }

  /** Closes the stage's tab and session; idempotent on browser-host's side. Throws {@link BrowserHostError}. */
  async close(sessionId: string): Promise<void> {
    const res = await this.call('DELETE', `${BROWSER_SESSION_ROUTES.close}${encodeURIComponent(sessionId)}`, CLOSE_TIMEOUT_MS);
    if (res.status !== 204 && res.status !== 404) throw await this.refusal(res);
  }

  /**
   * Hands a profile stage's agent-browser navigations (hosts only) to browser-host for the
   * soft allowlist audit; accepted also after the session closed. Throws {@link BrowserHostError}.
   */
  async reportActivity(sessionId: string, report: StageActivityReport): Promise<void> {
    const res = await this.call('POST', BROWSER_SESSION_ROUTES.activity(sessionId), CLOSE_TIMEOUT_MS, report);
    if (res.status !== 204) throw await this.refusal(res);
  }

  private async call(method: string, path: string, timeoutMs: number, body?: unknown): Promise<Response> {
    try {
      return await fetch(`${this.base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new BrowserHostError(
        'browser_host_unavailable',
        0,
        `browser-host at ${this.base} did not answer: ${(error as Error).message}`,
      );
    }
  }

  private async refusal(res: Response): Promise<BrowserHostError> {
    const body = (await res.json().catch(() => undefined)) as { code?: unknown; message?: unknown } | undefined;
    const code = typeof body?.code === 'string' ? body.code : `http_${res.status}`;
    const message = typeof body?.message === 'string' ? body.message : `browser-host answered ${res.status}`;
    return new BrowserHostError(code, res.status, message);
  }
}
