import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CdpConnection } from '@stageflow/cdp';

/** Test-only helpers for integration tests against a real Chromium. */

export interface TestSite {
  port: number;
  /** `host path` of every request the site received, in order. */
  seen: string[];
  close(): Promise<void>;
}

/** A tiny site on 127.0.0.1; `route` answers by host (port stripped) and path. */
export async function startSite(
  route: (host: string, path: string, req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestSite> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push(`${host} ${path}`);
    route(host, path, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A 1×1 GIF, so an allowed <img> really loads. */
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

export interface OpenTab {
  targetId: string;
  sessionId: string;
}

/** New tab, attached with a flattened session, Page domain on. */
export async function openTab(cdp: CdpConnection): Promise<OpenTab> {
  const targetId = await cdp.createTab();
  const sessionId = await cdp.attachToTab(targetId);
  await cdp.send('Page.enable', {}, { sessionId });
  return { targetId, sessionId };
}

/** Navigates and waits for the load event; returns Chrome's errorText when the navigation failed. */
export async function navigate(cdp: CdpConnection, tab: OpenTab, url: string): Promise<string | undefined> {
  const loaded = cdp.waitForEvent('Page.loadEventFired', { sessionId: tab.sessionId, timeoutMs: 30_000 });
  loaded.catch(() => undefined);
  const result = await cdp.send<{ errorText?: string }>('Page.navigate', { url }, { sessionId: tab.sessionId, timeoutMs: 30_000 });
  if (result.errorText) return result.errorText;
  await loaded;
  return undefined;
}

/** `Runtime.evaluate` by value. */
export async function evaluate<T>(cdp: CdpConnection, tab: OpenTab, expression: string, userGesture = false): Promise<T> {
  const { result } = await cdp.send<{ result: { value: T } }>(
    'Runtime.evaluate',
    { expression, returnByValue: true, awaitPromise: true, userGesture },
    { sessionId: tab.sessionId, timeoutMs: 30_000 },
  );
  return result.value;
}

/** Polls (bounded) until `check` holds. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** argv of a process. */
export async function cmdline(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/cmdline`, 'latin1')).split('\0').filter(Boolean);
}

/**
 * Local addresses a TCP port listens on, from /proc/net/tcp and tcp6
 * (e.g. `127.0.0.1`, `0.0.0.0`, `::`).
 */
export async function listenAddresses(port: number): Promise<string[]> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local?.endsWith(`:${hexPort}`)) continue;
      const hex = local.split(':')[0];
      found.push(hex.length === 8 ? ipv4(hex) : hex === '0'.repeat(32) ? '::' : `ipv6:${hex}`);
    }
  }
  return found;
}

function ipv4(hex: string): string {
  // /proc/net/tcp stores the address little-endian.
  return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
}
