export { createLogger, loggerOptions, REDACTED_PATHS, redactUrl } from './lib/logger';
export { LoggingModule } from './lib/logging.module';
