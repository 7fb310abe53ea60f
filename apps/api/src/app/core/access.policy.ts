import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import { StageflowError } from '@stageflow/contracts';

/**
 * Who may use the api, for REST and the WebSocket alike.
 *
 * - With a token configured: every request carries it (`Authorization: Bearer`,
 *   or `?token=` on the WebSocket upgrade, since browsers cannot set headers there).
 * - Without a token the api is loopback-only (config refuses anything else), and a
 *   browser is the remaining way in: a page on another site could POST to
 *   127.0.0.1 or open a WebSocket to it, and DNS rebinding could make that page
 *   "same-origin". So without a token we require a loopback `Host` and, when a
 *   browser sends `Origin`, that it is this very host.
 */
export class AccessPolicy {
  private readonly digest?: Buffer;

  constructor(token?: string) {
    this.digest = token === undefined ? undefined : sha256(token);
  }

  get tokenRequired(): boolean {
    return this.digest !== undefined;
  }

  /** `null` when the request may go on; otherwise the error to answer with. */
  check(headers: IncomingHttpHeaders, queryToken?: string): StageflowError | null {
    if (this.digest) return this.checkToken(headers, queryToken);
    return checkBrowserOrigin(headers);
  }

  /**
   * A live-view WebSocket upgrade: its ticket is the credential (issued only to a
   * caller with the token, checked by the relay), so the token is not asked for
   * again; without a token the loopback Host and same-origin rules still apply.
   */
  checkTicketUpgrade(headers: IncomingHttpHeaders): StageflowError | null {
    return this.digest ? null : checkBrowserOrigin(headers);
  }

  private checkToken(headers: IncomingHttpHeaders, queryToken?: string): StageflowError | null {
    const presented = bearer(headers.authorization) ?? queryToken;
    // Hashing first makes the comparison constant-time whatever the lengths.
    if (presented !== undefined && this.digest && timingSafeEqual(sha256(presented), this.digest)) return null;
    return new StageflowError(
      'unauthorized',
      presented === undefined
        ? 'This api needs its token: send "Authorization: Bearer <STAGEFLOW_API_TOKEN>".'
        : 'The token sent does not match STAGEFLOW_API_TOKEN.',
      401,
    );
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function bearer(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

function checkBrowserOrigin(headers: IncomingHttpHeaders): StageflowError | null {
  const host = headers.host;
  if (host !== undefined && !isLoopbackHostHeader(host)) {
    return new StageflowError(
      'host_forbidden',
      `Without STAGEFLOW_API_TOKEN the api only answers requests addressed to a loopback host, not "${host.slice(0, 100)}": ` +
        'use http://127.0.0.1, or set a token.',
      403,
    );
  }
  const origin = headers.origin;
  if (origin !== undefined && !sameHost(origin, host)) {
    return new StageflowError(
      'origin_forbidden',
      'Requests from a page on another origin are refused: open the console from this api\'s own address.',
      403,
    );
  }
  return null;
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false; // includes the literal "null" origin of sandboxed frames and file:// pages
  }
}

/** `localhost`, `127.x.y.z` or `[::1]`, with or without a port. */
export function isLoopbackHostHeader(host: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}
