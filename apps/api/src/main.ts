import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { loadApiConfig } from '@stageflow/config';
import { createLogger } from '@stageflow/logging';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app/app.module';
import { configureApp } from './app/app.setup';
import { configOrExit } from './app/config-or-exit';

async function bootstrap(): Promise<void> {
  const config = configOrExit(() => loadApiConfig());
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    // Our own parsers, with the configured limit (see installBodyParsers).
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  configureApp(app, config);
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  app.get(Logger).log(`api listening on http://${config.host}:${config.port}/api (docs at /api/docs)`);
}

bootstrap().catch((error: unknown) => {
  createLogger('api').fatal({ err: error }, 'the api failed to start');
  process.exit(1);
});
