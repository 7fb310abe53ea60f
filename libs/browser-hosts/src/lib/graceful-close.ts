import { CdpConnection } from '@stageflow/cdp';

/**
 * `Browser.close` lets Chrome shut down cleanly and write cookies and preferences to
 * the profile (SIGTERM and SIGKILL do not: see docs/browser-hosts.md, "Closing").
 * Never throws: the socket may close before the answer (that is the browser quitting),
 * or the browser is wedged; either way the caller's bounded wait and kill decide.
 */
export async function askBrowserToQuit(wsEndpoint: string): Promise<void> {
  let cdp: CdpConnection | undefined;
  try {
    cdp = await CdpConnection.connect(wsEndpoint, { connectTimeoutMs: 3000, callTimeoutMs: 5000 });
    await cdp.send('Browser.close');
  } catch {
    // See above.
  } finally {
    await cdp?.close();
  }
}

/** True when `promise` settles (either way) within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(false), ms);
    const settled = () => {
      clearTimeout(timer);
      done(true);
    };
    void promise.then(settled, settled);
  });
}
