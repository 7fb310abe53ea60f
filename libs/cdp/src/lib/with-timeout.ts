import { CdpError } from './cdp.error';

/**
 * Settles like `work`, or rejects with a `cdp_timeout` {@link CdpError} after
 * `timeoutMs`. chrome-remote-interface and raw sockets have no timeout of their own,
 * and a page with an open JS dialog answers no protocol command at all, so every
 * call that waits on a browser goes through this.
 *
 * @param what - names the call in the error message ("Page.navigate", "GET /json/version").
 * @param onTimeout - runs once when the time is up (drop a pending entry, abort a request).
 */
export function withTimeout<T>(
  work: Promise<T>,
  timeoutMs: number,
  what: string,
  onTimeout?: () => void,
): Promise<T> {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return Promise.reject(new RangeError(`withTimeout: timeoutMs must be a positive number, got ${timeoutMs}`));
  }
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout?.();
      reject(
        new CdpError('cdp_timeout', `${what} got no answer from the browser within ${timeoutMs} ms.`, {
          what,
          timeoutMs,
        }),
      );
    }, timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
