import { request } from 'node:http';
import { CdpError } from './cdp.error';
import { isTcpPort } from './cdp-endpoint';

/** What `GET /json/version` says about a browser. */
export interface BrowserVersion {
  /** e.g. `Chrome/156.0.8078.108` (also for new headless, since Chrome 1xx). */
  product: string;
  protocolVersion: string;
  /** The default user agent; says `HeadlessChrome` when headless. */
  userAgent: string;
  /** As the browser reports it; connect with the endpoint from DevToolsActivePort instead. */
  webSocketDebuggerUrl: string;
}

export interface BrowserVersionOptions {
  /** @defaultValue 3000 */
  timeoutMs?: number;
  /**
   * Where the port is: loopback for a local browser; the address of a browser
   * container's relay otherwise (an IPv4 address: Chrome refuses a Host header that
   * is a name other than localhost). @defaultValue '127.0.0.1'
   */
  host?: string;
}

/**
 * `GET http://127.0.0.1:<port>/json/version` (or `options.host`), the cheapest health
 * check a browser answers. Bounded by `timeoutMs`.
 *
 * @throws CdpError `cdp_unreachable` (connection refused, bad answer) or `cdp_timeout`.
 */
export function browserVersion(port: number, options: BrowserVersionOptions = {}): Promise<BrowserVersion> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const host = options.host ?? '127.0.0.1';
  if (!isTcpPort(port)) {
    return Promise.reject(new CdpError('cdp_unreachable', `"${port}" is not a TCP port.`, { port }));
  }
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/json/version', method: 'GET', timeout: timeoutMs });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new CdpError('cdp_timeout', `GET /json/version on port ${port} got no answer within ${timeoutMs} ms.`));
    }, timeoutMs);
    req.on('timeout', () => req.destroy());
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new CdpError('cdp_unreachable', `No browser answers on ${host}:${port} (${error.code ?? error.message}).`, {
          port,
        }),
      );
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('error', () => undefined);
      res.on('end', () => {
        clearTimeout(timer);
        const parsed = parseVersion(res.statusCode, body);
        if (parsed) resolve(parsed);
        else reject(new CdpError('cdp_unreachable', `Port ${port} answered /json/version with something that is not Chrome.`));
      });
    });
    req.end();
  });
}

function parseVersion(status: number | undefined, body: string): BrowserVersion | undefined {
  if (status !== 200) return undefined;
  try {
    const json = JSON.parse(body) as Record<string, unknown>;
    const product = json['Browser'];
    const userAgent = json['User-Agent'];
    if (typeof product !== 'string' || typeof userAgent !== 'string') return undefined;
    return {
      product,
      userAgent,
      protocolVersion: String(json['Protocol-Version'] ?? ''),
      webSocketDebuggerUrl: String(json['webSocketDebuggerUrl'] ?? ''),
    };
  } catch {
    return undefined;
  }
}
