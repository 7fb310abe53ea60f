export { createLogger, loggerOptions, REDACTED_PATHS } from './lib/logger';
export { LoggingModule } from './lib/logging.module';
