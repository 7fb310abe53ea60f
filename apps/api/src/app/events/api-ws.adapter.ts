import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { IncomingMessage } from 'node:http';
import type { AccessPolicy } from '../core/access.policy';
import { MAX_CLIENT_MESSAGE_BYTES } from './ws-message';

type VerifyCallback = (ok: boolean, code?: number, message?: string, headers?: Record<string, string>) => void;

/**
 * `WsAdapter` (raw `ws`) with the api's access policy applied at the upgrade:
 * a refused client gets an HTTP error and never a socket. Browsers cannot set
 * headers on a WebSocket, so the token may also come as `?token=`.
 */
export class ApiWsAdapter extends WsAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly policy: AccessPolicy,
  ) {
    super(app);
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
