import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpBrowserHostBrowserData } from './browser-host-browser-data.adapter';

/** The api's side of browser-host's `DELETE /internal/profiles/:profile/browser-data`, against a scripted server. */
describe('HttpBrowserHostBrowserData', () => {
  let server: Server | undefined;
  const seen: Array<{ method?: string; url?: string }> = [];

  async function serve(status: number, body: unknown): Promise<string> {
    server = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  afterEach(async () => {
    seen.length = 0;
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('sends DELETE to the profile\'s browser-data route and returns what was removed', async () => {
    const data = new HttpBrowserHostBrowserData(await serve(200, { browserData: 'volume_removed' }));
    await expect(data.remove('work.1')).resolves.toBe('volume_removed');
    expect(seen).toEqual([{ method: 'DELETE', url: '/internal/profiles/work.1/browser-data' }]);
  });

  it('is 503 browser_host_unavailable, saying to start browser-host and delete again, when nothing answers', async () => {
    const url = await serve(200, {});
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    await expect(new HttpBrowserHostBrowserData(url).remove('work')).rejects.toMatchObject({
      code: 'browser_host_unavailable',
      status: 503,
      message: expect.stringMatching(/was not deleted.*Start browser-host .*delete the profile again/),
    });
  });

  it('keeps browser-host\'s 409 code and details, saying the profile was not deleted', async () => {
    const data = new HttpBrowserHostBrowserData(
      await serve(409, { code: 'profile_leased', message: 'Browser profile "work" is in use by run r-1.', details: { profile: 'work' } }),
    );
    await expect(data.remove('work')).rejects.toMatchObject({
      code: 'profile_leased',
      status: 409,
      message: 'Profile "work" was not deleted. Browser profile "work" is in use by run r-1.',
      details: { profile: 'work' },
    });
  });

  it('is 502 browser_host_failed on a 500 or an answer that is not a result', async () => {
    const failing = new HttpBrowserHostBrowserData(await serve(500, { code: 'internal_error', message: 'x' }));
    await expect(failing.remove('work')).rejects.toMatchObject({ code: 'browser_host_failed', status: 502 });
    await new Promise((resolve) => server?.close(resolve));
    const odd = new HttpBrowserHostBrowserData(await serve(200, { browserData: '/var/lib/docker/volumes/x' }));
    await expect(odd.remove('work')).rejects.toMatchObject({ code: 'browser_host_failed', status: 502 });
  });
});
