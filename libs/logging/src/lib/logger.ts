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
  // A live-view ticket and the api token ride in WebSocket URLs (browsers cannot set headers there).
  'req.query.ticket',
  'req.query.token',
  '*.ticket',
  'ticket',
];

/** Query parameters whose values are credentials; {@link redactUrl} blanks them. */
const SECRET_QUERY_PARAMS = ['ticket', 'token'];

/**
 * A request URL fit for a log line: the values of `ticket` and `token` query
 * parameters are replaced, the rest is kept as sent.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = decodeURIComponentSafe(eq < 0 ? pair : pair.slice(0, eq));
      return SECRET_QUERY_PARAMS.includes(name.toLowerCase()) ? `${pair.slice(0, eq < 0 ? pair.length : eq)}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

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
