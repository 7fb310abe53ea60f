import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { LIVE_VIEW_LIMITS } from '@stageflow/contracts';
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { StageViews } from '../views/stage-views.service';
import { ViewAdmission, type Refused } from './view-admission.service';
import { Viewer } from './viewer';

/** Ping interval; a viewer that misses one pong is dropped. */
const HEARTBEAT_MS = 30_000;

/**
 * The viewers' WebSockets, on the relay's HTTP server at
 * `/api/runs/<run>/stages/<stage>/live-view?ticket=<ticket>` (the api forwards that path
 * as is). An upgrade the relay refuses gets an HTTP error `{code, message}` and never
 * a socket. The request URL (it holds the ticket) is never logged.
 */
@Injectable()
export class LiveViewServer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly log = new Logger('LiveViewServer');
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: LIVE_VIEW_LIMITS.maxClientMessageBytes, perMessageDeflate: false });
  private readonly viewers = new Set<Viewer>();
  private heartbeat?: ReturnType<typeof setInterval>;
  private nextViewer = 1;
  private stopping = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly admission: ViewAdmission,
    private readonly views: StageViews,
  ) {}

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head));
    this.heartbeat = setInterval(() => {
      for (const viewer of this.viewers) viewer.heartbeat();
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    // The views end their viewers (1001) in StageViews' shutdown; the server takes no new ones.
    this.wss.close();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => undefined);
    if (this.stopping) return reject(socket, { ok: false, status: 503, code: 'relay_stopping', message: 'The live view relay is restarting; try again in a moment.' });
    const admitted = await this.admission.admit(req.url);
    if (!admitted.ok) return reject(socket, admitted);
    const { ticket, session } = admitted;
    const ids = { runId: ticket.runId, stageId: ticket.stageId, attempt: ticket.attempt, mode: ticket.mode };
    let view;
    try {
      view = await this.views.viewOf(session);
    } catch (error) {
      this.log.warn({ msg: `Could not attach to the stage's tab: ${(error as Error).message}`, ...ids, browserId: session.browserId });
      return reject(socket, { ok: false, status: 502, code: 'live_view_unavailable', message: 'The relay could not attach to the stage\'s browser tab; if the stage still runs, try again.' });
    }
    if (view.viewerCount >= LIVE_VIEW_LIMITS.maxViewersPerStage) {
      return reject(socket, { ok: false, status: 429, code: 'too_many_viewers', message: `This stage already has ${LIVE_VIEW_LIMITS.maxViewersPerStage} viewers; close one first.` });
    }
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const viewer = new Viewer(this.nextViewer++, ticket.mode, ws, view, this.log);
      this.viewers.add(viewer);
      ws.once('close', () => this.viewers.delete(viewer));
      this.log.log({ msg: 'A viewer opened a live view', ...ids, viewer: viewer.id });
      view.join(viewer);
    });
  }
}

/** Answers a refused upgrade with an HTTP error and a JSON body, then closes the socket. */
function reject(socket: Duplex, refused: Refused): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ code: refused.code, message: refused.message });
  socket.end(
    `HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
