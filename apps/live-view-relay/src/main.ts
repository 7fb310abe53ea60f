import { NestFactory } from '@nestjs/core';
import { ConfigError, loadRelayConfig } from '@stageflow/config';
import { HostConfigError } from '@stageflow/host-config';
import { createLogger } from '@stageflow/logging';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app/app.module';
import { SERVICE_NAME } from './app/service-config';

async function bootstrap(): Promise<void> {
  const config = loadRelayConfig();
  const app = await NestFactory.create(AppModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  app.get(Logger).log(`listening on http://${config.host}:${config.port}`, 'Bootstrap');
}

bootstrap().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof HostConfigError) {
    // The message lists every problem and how to fix it; a stack trace would only hide it.
    process.stderr.write(`${err.message}\n`);
  } else {
    createLogger(SERVICE_NAME).fatal({ err }, 'failed to start');
  }
  process.exit(1);
});
