import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { ConfigError, loadRunnerConfig, RunnerConfig } from '@stageflow/config';
import { createLogger } from '@stageflow/logging';
import { AppModule } from './app/app.module';

/**
 * The runner: a worker process with no HTTP API (only a loopback health
 * endpoint). Stops taking jobs on SIGTERM and lets running stages finish.
 */
async function bootstrap(): Promise<void> {
  let config: RunnerConfig;
  try {
    config = loadRunnerConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  await app.init();
}

bootstrap().catch((error: unknown) => {
  createLogger('runner').fatal({ err: error }, 'runner failed to start');
  process.exit(1);
});
