import pino, { Logger, LoggerOptions } from 'pino';

/**
 * Paths pino blanks in every log line. Tokens and cookies must never reach a
 * log (STYLE rule 6); stage output is logged as events, not through here.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.token',
  '*.password',
  '*.secret',
  'token',
];

/** Options shared by every Stageflow process: JSON lines, the service name on each. */
export function loggerOptions(service: string, level: string): LoggerOptions {
  return {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  };
}

/** A JSON logger for code that runs outside Nest (bootstrap, scripts). */
export function createLogger(service: string, level = 'info', destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(service, level), destination) : pino(loggerOptions(service, level));
}
