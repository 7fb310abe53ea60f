import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { createServer, connect, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { BROWSER_SETTINGS, type BrowserSettings } from './browser-host.tokens';

interface Relay {
  server: Server;
  port: number;
}

/**
 * Makes a local browser's debugging port reachable by stage processes in other
 * containers (browser-host in compose with the local adapter): Chrome listens on
 * 127.0.0.1 only, so a TCP relay per browser listens on this container's address
 * and forwards to it, and the endpoint handed to stages names that address.
 * Chrome accepts the connection because the Host header is an IP address.
 *
 * Off unless `STAGEFLOW_BROWSER_CDP_ADDRESS` is set (`auto` or an IPv4 address).
 * Container-host endpoints are already reachable and pass through unchanged. Like
 * the container host in compose, the relay is reachable by every container on the
 * stack network (docs/docker.md, "Debugging ports").
 */
@Injectable()
export class CdpPublisher implements OnModuleDestroy {
  private readonly log = new Logger('CdpPublisher');
  private readonly relays = new Map<number, Promise<Relay>>();
  private readonly address?: string;

  constructor(@Inject(BROWSER_SETTINGS) settings: BrowserSettings) {
    const wanted = settings.publishCdpAddress;
    this.address = wanted === 'auto' ? ownIPv4() : wanted;
    if (wanted === 'auto' && !this.address) this.log.warn({ msg: 'STAGEFLOW_BROWSER_CDP_ADDRESS=auto found no IPv4 address; endpoints stay on loopback' });
  }

  /** The endpoint a stage process should use for `wsEndpoint`. */
  async publish(wsEndpoint: string): Promise<string> {
    if (!this.address) return wsEndpoint;
    const url = new URL(wsEndpoint);
    if (url.hostname !== '127.0.0.1') return wsEndpoint;
    const relay = await this.relayFor(Number(url.port));
    url.hostname = this.address;
    url.port = String(relay.port);
    return url.toString();
  }

  /** The browser is gone: stops its relay. */
  async unpublish(wsEndpoint: string): Promise<void> {
    const url = new URL(wsEndpoint);
    if (url.hostname !== '127.0.0.1') return;
    const pending = this.relays.get(Number(url.port));
    this.relays.delete(Number(url.port));
    const relay = await pending?.catch(() => undefined);
    if (relay) await new Promise((done) => relay.server.close(done));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.relays.keys()].map((port) => this.unpublish(`ws://127.0.0.1:${port}/`)));
  }

  private relayFor(target: number): Promise<Relay> {
    let pending = this.relays.get(target);
    if (!pending) {
      pending = new Promise<Relay>((resolve, reject) => {
        const server = createServer((client) => {
          const upstream = connect(target, '127.0.0.1');
          client.pipe(upstream).pipe(client);
          const end = () => {
            client.destroy();
            upstream.destroy();
          };
          client.on('error', end).on('close', end);
          upstream.on('error', end).on('close', end);
        });
        server.once('error', reject);
        server.listen(0, '0.0.0.0', () => resolve({ server, port: (server.address() as { port: number }).port }));
      });
      pending.catch(() => this.relays.delete(target));
      this.relays.set(target, pending);
    }
    return pending;
  }
}

/** This container's first non-internal IPv4 address. */
function ownIPv4(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}
