import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import type { ApiConfig } from '@stageflow/config';
import { LiveViewTickets, StageSessionDirectory } from '@stageflow/live-view';
import { ApiModule } from '../app/api.module';
import { configureApp } from '../app/app.setup';
import type { EventsOptions } from '../app/events/events.options';
import { REDIS_PROBE, type RedisProbe } from '../app/health/redis.probe';
import { FakeEngine, fakeEngineModule } from './fake-engine';

/** Keeps what the app logs, so tests can assert on it (e.g. a 500's stack is logged, not sent). */
export class CapturingLogger implements LoggerService {
  readonly entries: { level: string; message: string; extra: unknown[] }[] = [];
  log(message: unknown, ...extra: unknown[]): void {
    this.entries.push({ level: 'log', message: String(message), extra });
  }
  error(message: unknown, ...extra: unknown[]): void {
    this.entries.push({ level: 'error', message: String(message), extra });
  }
  warn(message: unknown, ...extra: unknown[]): void {
    this.entries.push({ level: 'warn', message: String(message), extra });
  }
  debug(): void {
    // not kept: too chatty for assertions
  }
  verbose(): void {
    // not kept
  }
}

export class FakeRedisProbe implements RedisProbe {
  up = true;
  async ping(): Promise<boolean> {
    return this.up;
  }
}

export interface TestApp {
  app: NestExpressApplication;
  engine: FakeEngine;
  redis: FakeRedisProbe;
  logger: CapturingLogger;
  config: ApiConfig;
}

export interface TestAppOptions {
  token?: string;
  consoleDir?: string;
  bodyLimitBytes?: number;
  events?: Partial<EventsOptions>;
  /** Where the live-view WebSockets are forwarded. @defaultValue a port nothing listens on */
  liveViewUrl?: string;
  browserHostUrl?: string;
  /** Stand-ins for the live-view lib's Redis-backed providers (tickets, the session registry). */
  liveView?: { tickets?: unknown; directory?: unknown };
  /** Listen on a free loopback port (needed for WebSocket tests). */
  listen?: boolean;
  /** STAGEFLOW_ARTIFACTS_ROOT of the app (a folder that does not exist by default). */
  artifactsRoot?: string;
}

export function testConfig(options: Pick<TestAppOptions, 'token' | 'bodyLimitBytes' | 'consoleDir' | 'artifactsRoot' | 'liveViewUrl' | 'browserHostUrl'> = {}): ApiConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    token: options.token,
    bodyLimitBytes: options.bodyLimitBytes ?? 64 * 1024,
    consoleDir: options.consoleDir,
    liveViewUrl: options.liveViewUrl ?? 'http://127.0.0.1:1',
    browserHostUrl: options.browserHostUrl ?? 'http://127.0.0.1:1',
    redis: { url: 'redis://127.0.0.1:1', prefix: 'sft:' },
    logLevel: 'error',
    home: '/nonexistent',
    artifactsRoot: options.artifactsRoot ?? '/nonexistent/artifacts',
  };
}

/** The api over an in-memory engine, configured exactly as main.ts does. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options);
  const engine = new FakeEngine();
  const redis = new FakeRedisProbe();
  const logger = new CapturingLogger();
  let builder = Test.createTestingModule({
    imports: [ApiModule.forRoot(config, { engine: fakeEngineModule(engine), events: options.events })],
  })
    .overrideProvider(REDIS_PROBE)
    .useValue(redis);
  if (options.liveView?.tickets) builder = builder.overrideProvider(LiveViewTickets).useValue(options.liveView.tickets);
  if (options.liveView?.directory) builder = builder.overrideProvider(StageSessionDirectory).useValue(options.liveView.directory);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger });
  configureApp(app, config);
  if (options.listen) await app.listen(0, '127.0.0.1');
  else await app.init();
  return { app, engine, redis, logger, config };
}

/** `ws://127.0.0.1:<port>` of a listening test app. */
export function wsBase(app: NestExpressApplication): string {
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('the test app is not listening on TCP');
  return `ws://127.0.0.1:${address.port}`;
}
