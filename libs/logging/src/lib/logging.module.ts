import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { loggerOptions, redactUrl } from './logger';

/**
 * Nest's Logger backed by pino (JSON lines). Each app imports
 * `LoggingModule.forRoot('<service>', level)` and calls
 * `app.useLogger(app.get(Logger))` from nestjs-pino at bootstrap.
 */
@Module({})
export class LoggingModule {
  static forRoot(service: string, level: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            ...loggerOptions(service, level),
            // Health probes every few seconds would drown the log.
            autoLogging: { ignore: (req) => (req.url ?? '').includes('/health') },
            // pino-http hands the serialized request; its url still carries the query string.
            serializers: { req: (req: { url?: string }) => (typeof req.url === 'string' ? { ...req, url: redactUrl(req.url) } : req) },
          },
        }),
      ],
      exports: [LoggerModule],
    };
  }
}
