import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunnerConfig } from '@stageflow/config';
import { EngineRedis } from '@stageflow/engine';
import { RUNNER_CONFIG, RUNNER_OPTIONS } from '../runner.tokens';
import type { ResolvedRunnerOptions } from '../runner.options';

/**
 * `GET /health` on 127.0.0.1:`healthPort`: 200 `{"status":"ok"}` while Redis
 * answers PING, 503 `{"status":"unavailable"}` otherwise. The runner has no
 * other HTTP surface, so this is a bare node:http server, not Nest's.
 */
@Injectable()
export class HealthServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HealthServer');
  private server?: Server;

  constructor(
    private readonly redis: EngineRedis,
    @Inject(RUNNER_CONFIG) private readonly config: RunnerConfig,
    @Inject(RUNNER_OPTIONS) private readonly options: ResolvedRunnerOptions,
  ) {}

  /** The bound port (differs from the config when it is 0). */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.health) return;
    this.server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/health') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not_found"}');
        return;
      }
      void this.redis.ping().then((ok) => {
        res
          .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: ok ? 'ok' : 'unavailable' }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(this.config.healthPort, '127.0.0.1', () => resolve());
    });
    this.logger.log({ msg: `health endpoint on http://127.0.0.1:${this.port}/health` });
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
