import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AccessPolicy } from '../core/access.policy';
import { MAX_CLIENT_MESSAGE_BYTES } from './ws-message';

type VerifyCallback = (ok: boolean, code?: number, message?: string, headers?: Record<string, string>) => void;

/** Upgrades served outside Nest's gateways (the live-view WebSocket, forwarded to the relay). */
export interface UpgradeRoute {
  handles(req: IncomingMessage): boolean;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Ends the route's open sockets (the app is closing; an upgraded socket would keep the process up). */
  close(): void;
}

/**
 * `WsAdapter` (raw `ws`) with the api's access policy applied at the upgrade:
 * a refused client gets an HTTP error and never a socket. Browsers cannot set
 * headers on a WebSocket, so the token may also come as `?token=`.
 */
export class ApiWsAdapter extends WsAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly policy: AccessPolicy,
    private readonly routes: readonly UpgradeRoute[] = [],
  ) {
    super(app);
  }

  override async dispose(): Promise<void> {
    for (const route of this.routes) route.close();
    await super.dispose();
  }

  /**
   * WsAdapter destroys every upgrade whose path is not a gateway's; the extra routes
   * (with path parameters, which gateways cannot have) get theirs first.
   */
  protected override ensureHttpServerExists(port: number, httpServer?: Server): Server | undefined {
    if (!httpServer || this.routes.length === 0 || this.httpServersRegistry.has(port)) return super.ensureHttpServerExists(port, httpServer);
    const before = new Set(httpServer.listeners('upgrade'));
    const result = super.ensureHttpServerExists(port, httpServer);
    const gateways = httpServer.listeners('upgrade').filter((l) => !before.has(l)) as Array<(req: IncomingMessage, socket: Duplex, head: Buffer) => void>;
    for (const listener of gateways) httpServer.off('upgrade', listener);
    httpServer.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const route = this.routes.find((r) => r.handles(req));
      if (route) route.handle(req, socket, head);
      else for (const listener of gateways) listener.call(httpServer, req, socket, head);
    });
    return result;
  }

  override create(port: number, options: Record<string, unknown> = {}): ReturnType<WsAdapter['create']> {
    return super.create(port, {
      ...options,
      maxPayload: MAX_CLIENT_MESSAGE_BYTES,
      verifyClient: (info: { req: IncomingMessage }, done: VerifyCallback) => {
        const denied = this.policy.check(info.req.headers, queryToken(info.req.url));
        if (!denied) return done(true);
        const body = JSON.stringify({ code: denied.code, message: denied.message });
        done(false, denied.status, body, { 'Content-Type': 'application/json' });
      },
    });
  }
}

function queryToken(url: string | undefined): string | undefined {
  try {
    return new URL(url ?? '/', 'http://localhost').searchParams.get('token') ?? undefined;
  } catch {
    return undefined;
  }
}
