import { Injectable, Logger } from '@nestjs/common';
import { isProfileBrowserDataResult, profileBrowserDataRoute, StageflowError, type ProfileBrowserDataOutcome } from '@stageflow/contracts';

/** A volume removal is a few Docker calls; the wait for browser-host's startup sweep is 10 s. */
export const BROWSER_DATA_REQUEST_TIMEOUT_MS = 30_000;

/** Removes a profile's browser data in browser-host (the api has no Docker); a port so the service is unit-tested without it. */
export abstract class BrowserHostBrowserData {
  /**
   * What browser-host removed. Throws, keeping browser-host's code, status and message,
   * when it refuses (409 leased or a container uses the volume); `browser_host_unavailable`
   * (503) when it does not answer; `browser_host_failed` (502) otherwise.
   */
  abstract remove(profile: string): Promise<ProfileBrowserDataOutcome>;
}

/** {@link BrowserHostBrowserData} over browser-host's internal HTTP route (`profileBrowserDataRoute`). */
@Injectable()
export class HttpBrowserHostBrowserData extends BrowserHostBrowserData {
  private readonly log = new Logger('BrowserHostBrowserData');

  constructor(private readonly baseUrl: string) {
    super();
  }

  async remove(profile: string): Promise<ProfileBrowserDataOutcome> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${profileBrowserDataRoute(profile)}`, {
        method: 'DELETE',
        signal: AbortSignal.timeout(BROWSER_DATA_REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      this.log.warn({ msg: `browser-host did not answer the removal of a profile's browser data: ${(error as Error).message}`, profile });
      throw new StageflowError(
        'browser_host_unavailable',
        `Profile "${profile}" was not deleted: browser-host, which removes its saved browser login (the container host's Docker volume), ` +
          'did not answer. Nothing was removed. Start browser-host (docker compose up -d browser-host) and delete the profile again.',
        503,
        { profile },
      );
    }
    const body: unknown = await res.json().catch(() => undefined);
    if (res.ok && isProfileBrowserDataResult(body)) return body.browserData;
    const error = body as { code?: unknown; message?: unknown; details?: unknown } | undefined;
    if ((res.status === 409 || res.status === 503) && typeof error?.code === 'string' && typeof error.message === 'string') {
      // browser-host's words already say what to do (wait for the run, or for it to start).
      throw new StageflowError(error.code, `Profile "${profile}" was not deleted. ${error.message}`, res.status, error.details);
    }
    this.log.warn({ msg: `browser-host answered the removal of a profile's browser data with ${res.status}`, profile, code: error?.code });
    throw new StageflowError(
      'browser_host_failed',
      `Profile "${profile}" was not deleted: browser-host could not remove its saved browser login (${res.status}` +
        `${typeof error?.code === 'string' ? ` ${error.code}` : ''}); its log has the cause. Nothing was removed. Delete the profile again, and report it if it repeats.`,
      502,
      { profile },
    );
  }
}
