import type { LoggerService } from '@nestjs/common';
import { parseLiveViewPath } from '@stageflow/contracts';
import { request as httpRequest, STATUS_CODES, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AccessPolicy } from '../core/access.policy';

/** Any live-view path, well-formed ids or not (a malformed one gets a 400, not a dropped socket). */
const LIVE_VIEW_SHAPE = /^\/api\/runs\/[^/]+\/stages\/[^/]+\/live-view$/;
/** How long the relay may take to answer the upgrade (it checks the ticket and attaches to the tab). */
const UPSTREAM_TIMEOUT_MS = 20_000;
/** The handshake headers the relay needs; nothing else crosses (no Authorization, no Cookie). */
const FORWARDED_HEADERS = ['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol'];

/**
 * Forwards live-view WebSockets (`/api/runs/<run>/stages/<stage>/live-view?ticket=…`)
 * to live-view-relay on the internal network: only the api is published, and the
 * console talks to it alone. The ticket is the credential and the relay checks it
 * (the api does not consume or trust it); without an api token the usual loopback
 * Host and same-origin checks apply first. The request URL carries the ticket, so it
 * is never logged: log lines name the path only.
 */
export class LiveViewProxy {
  private readonly target: URL;
  /** Forwarded views (viewer socket, relay socket), ended when the api closes. */
  private readonly open = new Set<{ viewer: Duplex; relay: Socket }>();

  constructor(
    relayUrl: string,
    private readonly policy: AccessPolicy,
    private readonly log: LoggerService,
  ) {
    this.target = new URL(relayUrl);
  }

  /** Whether this upgrade is a live view (the events WebSocket and everything else are not). */
  handles(req: IncomingMessage): boolean {
    return LIVE_VIEW_SHAPE.test(pathOf(req.url));
  }

  close(): void {
    for (const { viewer, relay } of this.open) {
      viewer.destroy();
      relay.destroy();
    }
    this.open.clear();
  }

  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    const path = pathOf(req.url);
    const denied = this.policy.checkTicketUpgrade(req.headers);
    if (denied) return refuse(socket, denied.status, denied.code, denied.message);
    if (!parseLiveViewPath(path)) {
      return refuse(socket, 400, 'invalid_id', 'The run or stage id in the path is malformed: ids are 1 to 128 letters, digits, "_" or "-".');
    }
    const headers: Record<string, string> = { connection: 'Upgrade', upgrade: 'websocket', host: this.target.host };
    for (const name of FORWARDED_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const send = this.target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send({
      protocol: this.target.protocol,
      hostname: this.target.hostname,
      port: this.target.port,
      method: 'GET',
      path: req.url,
      headers,
      timeout: UPSTREAM_TIMEOUT_MS,
    });
    const unreachable = (why: string): void => {
      this.log.warn?.({ msg: `The live view relay did not take a viewer: ${why}`, path, relay: this.target.origin });
      refuse(socket, 502, 'live_view_unreachable', `The live view relay does not answer (${why}). Is live-view-relay running, and STAGEFLOW_LIVE_VIEW_URL right? Under compose the relay shares browser-host's network: after browser-host was recreated, recreate it too (docker compose up -d --force-recreate live-view-relay).`);
    };
    upstream.on('timeout', () => upstream.destroy(new Error(`no answer within ${UPSTREAM_TIMEOUT_MS / 1000} s`)));
    upstream.on('error', (error: NodeJS.ErrnoException) => unreachable(error.code ?? error.message));
    // The relay refused (bad ticket, view closed…): its status and {code, message} go to the viewer as they are.
    upstream.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (socket.destroyed) return;
        socket.write(
          `HTTP/1.1 ${res.statusCode ?? 502} ${STATUS_CODES[res.statusCode ?? 502] ?? ''}\r\n` +
            `Connection: close\r\nContent-Type: ${res.headers['content-type'] ?? 'application/json'}\r\nContent-Length: ${body.length}\r\n\r\n`,
        );
        socket.end(body);
      });
      res.on('error', () => socket.destroy());
    });
    upstream.on('upgrade', (res: IncomingMessage, relay: Socket, relayHead: Buffer) => {
      if (socket.destroyed) {
        relay.destroy();
        return;
      }
      relay.on('error', () => socket.destroy());
      socket.on('error', () => relay.destroy());
      let response = 'HTTP/1.1 101 Switching Protocols\r\n';
      for (let i = 0; i < res.rawHeaders.length; i += 2) response += `${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`;
      socket.write(`${response}\r\n`);
      if (relayHead.length) socket.write(relayHead);
      if (head.length) relay.write(head);
      (socket as Socket).setNoDelay?.(true);
      relay.setNoDelay(true);
      relay.pipe(socket);
      socket.pipe(relay);
      const pair = { viewer: socket, relay };
      this.open.add(pair);
      relay.on('close', () => {
        this.open.delete(pair);
        socket.destroy();
      });
      socket.on('close', () => {
        this.open.delete(pair);
        relay.destroy();
      });
    });
    upstream.end();
  }
}

/** The path of a request URL, without the query (which holds the ticket). */
function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}

function refuse(socket: Duplex, status: number, code: string, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

