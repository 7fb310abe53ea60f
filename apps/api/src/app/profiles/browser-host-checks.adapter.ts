import { Injectable, Logger } from '@nestjs/common';
import { profileCheckRoute, StageflowError, type LoginCheckRequest, type LoginCheckResult } from '@stageflow/contracts';

/**
 * How long the api waits for browser-host's answer: the check's own bound
 * (browser-host's lease TTL for a check, 3 min) plus a little.
 */
export const CHECK_REQUEST_TIMEOUT_MS = 190_000;

/** Runs a profile's login check in browser-host; a port so the service is unit-tested without it. */
export abstract class BrowserHostChecks {
  /** `{logged_in, url}`; browser-host's refusals keep their code, status and message. */
  abstract check(profile: string, criteria: LoginCheckRequest): Promise<LoginCheckResult>;
}

/** {@link BrowserHostChecks} over browser-host's internal HTTP route (`profileCheckRoute`). */
@Injectable()
export class HttpBrowserHostChecks extends BrowserHostChecks {
  private readonly log = new Logger('BrowserHostChecks');

  constructor(private readonly baseUrl: string) {
    super();
  }

  async check(profile: string, criteria: LoginCheckRequest): Promise<LoginCheckResult> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${profileCheckRoute(profile)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(criteria),
        signal: AbortSignal.timeout(CHECK_REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      this.log.warn({ msg: `browser-host did not answer the profile check: ${(error as Error).message}`, profile });
      throw new StageflowError(
        'browser_host_unavailable',
        `The login check of profile "${profile}" could not reach browser-host, which runs the browsers. Is it running? Try again in a moment.`,
        503,
      );
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (res.ok) return readResult(body, profile);
    const error = body as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    if (res.status < 500 || res.status === 502 || res.status === 503) {
      if (typeof error?.code === 'string' && typeof error.message === 'string') {
        throw new StageflowError(error.code, error.message, res.status, error.details);
      }
    }
    // browser-host's own failures are in its log; say where to look.
    this.log.warn({ msg: `browser-host answered the profile check with ${res.status}`, profile, code: error?.code });
    throw new StageflowError(
      'browser_host_failed',
      `browser-host failed while checking profile "${profile}" (${res.status}${typeof error?.code === 'string' ? ` ${error.code}` : ''}); its log has the cause. Try again, and report it if it repeats.`,
      502,
    );
  }
}

function readResult(body: unknown, profile: string): LoginCheckResult {
  const r = body as Partial<LoginCheckResult> | undefined;
  if (typeof r?.logged_in !== 'boolean' || typeof r.url !== 'string') {
    throw new StageflowError('browser_host_failed', `browser-host answered the check of profile "${profile}" with something that is not a result; its log may say why.`, 502);
  }
  return { logged_in: r.logged_in, url: r.url };
}
