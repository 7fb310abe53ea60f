import { CdpError } from './cdp.error';

/**
 * The debugging address of a running browser, as Chrome wrote it to
 * `<user-data-dir>/DevToolsActivePort`.
 */
export interface DevToolsActivePort {
  /** TCP port on 127.0.0.1. */
  port: number;
  /** `/devtools/browser/<id>`. */
  browserPath: string;
  /** `ws://127.0.0.1:<port>/devtools/browser/<id>`. */
  wsEndpoint: string;
}

const BROWSER_PATH = /^\/devtools\/browser\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Is `port` a usable TCP port number? */
export function isTcpPort(port: number): boolean {
  return Number.isInteger(port) && port > 0 && port < 65536;
}

/**
 * Parses `DevToolsActivePort`: the port on line 1, the browser target path on line 2.
 * Returns `undefined` for a file Chrome has not finished writing (it is not written
 * atomically, so a reader can see the port without the path or half a path).
 */
export function parseDevToolsActivePort(text: string): DevToolsActivePort | undefined {
  const [portLine, pathLine] = text.split(/\r?\n/);
  const port = Number(portLine?.trim());
  const browserPath = pathLine?.trim() ?? '';
  if (!/^\d+$/.test(portLine?.trim() ?? '') || !isTcpPort(port) || !BROWSER_PATH.test(browserPath)) {
    return undefined;
  }
  return { port, browserPath, wsEndpoint: browserWsEndpoint(port, browserPath) };
}

/**
 * The browser-level WebSocket endpoint on loopback. Always `127.0.0.1`, never
 * `localhost`: Node may resolve `localhost` to `::1`, where Chrome does not listen.
 */
export function browserWsEndpoint(port: number, browserPath: string): string {
  if (!isTcpPort(port)) {
    throw new CdpError('cdp_unreachable', `"${port}" is not a TCP port.`, { port });
  }
  if (!BROWSER_PATH.test(browserPath)) {
    throw new CdpError('cdp_unreachable', `"${browserPath}" is not a browser target path (/devtools/browser/<id>).`);
  }
  return `ws://127.0.0.1:${port}${browserPath}`;
}

/**
 * Checks a CDP WebSocket endpoint and rewrites a `localhost` host to `127.0.0.1`.
 * Only `ws:`/`wss:` URLs are accepted; other hosts are kept, because browser-host
 * may hand out a proxy on the stack's internal network.
 */
export function normalizeCdpEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new CdpError('cdp_unreachable', `"${endpoint}" is not a CDP WebSocket URL.`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new CdpError('cdp_unreachable', `A CDP endpoint must be a ws:// or wss:// URL, got "${url.protocol}".`);
  }
  if (url.hostname === 'localhost') url.hostname = '127.0.0.1';
  return url.toString();
}
