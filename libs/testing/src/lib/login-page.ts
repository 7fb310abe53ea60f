import { CdpConnection } from '@stageflow/cdp';

/** The host name of the login page the container tests use; nothing resolves it, Fetch answers it. */
export const LOGIN_SITE = 'login.stageflow.test';

/**
 * Logs in on a page that exists only in the test, in the given tab: the Fetch domain
 * answers `http://login.stageflow.test/…` with a persistent `Set-Cookie`, so a
 * browser in a container (which cannot reach this machine's loopback) gets a real
 * login cookie from a real navigation without any network.
 */
export async function logInOnTab(wsEndpoint: string, targetId: string, cookie: string): Promise<void> {
  const cdp = await CdpConnection.connect(wsEndpoint, { callTimeoutMs: 30_000 });
  try {
    const sessionId = await cdp.attachToTab(targetId);
    await cdp.send('Page.enable', {}, { sessionId });
    await cdp.send('Fetch.enable', { patterns: [{ urlPattern: `http://${LOGIN_SITE}/*` }] }, { sessionId });
    cdp.on('Fetch.requestPaused', (params, from) => {
      void cdp
        .send(
          'Fetch.fulfillRequest',
          {
            requestId: params['requestId'],
            responseCode: 200,
            responseHeaders: [
              { name: 'Content-Type', value: 'text/html' },
              { name: 'Set-Cookie', value: `${cookie}=1; Max-Age=3600; Path=/` },
            ],
            body: Buffer.from('<title>signed in</title>').toString('base64'),
          },
          { sessionId: from },
        )
        .catch(() => undefined); // a late favicon request after we left
    });
    const loaded = cdp.waitForEvent('Page.loadEventFired', { sessionId, timeoutMs: 30_000 });
    loaded.catch(() => undefined);
    const { errorText } = await cdp.send<{ errorText?: string }>('Page.navigate', { url: `http://${LOGIN_SITE}/login` }, { sessionId });
    if (errorText) throw new Error(`the login page did not load: ${errorText}`);
    await loaded;
    await cdp.send('Fetch.disable', {}, { sessionId });
  } finally {
    await cdp.close();
  }
}

/** Names of the cookies the browser holds for the login site. */
export async function loginCookies(wsEndpoint: string): Promise<string[]> {
  const cdp = await CdpConnection.connect(wsEndpoint);
  try {
    const { cookies } = await cdp.send<{ cookies: Array<{ name: string; domain: string }> }>('Storage.getCookies');
    return cookies.filter((c) => c.domain === LOGIN_SITE).map((c) => c.name).sort();
  } finally {
    await cdp.close();
  }
}
