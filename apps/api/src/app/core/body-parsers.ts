import type { NestExpressApplication } from '@nestjs/platform-express';
import { StageflowError } from '@stageflow/contracts';
import type { HttpRequest, HttpResponse, NextFunction } from './http-request';

export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'] as const;
/** YAML as a request body; `text/plain` too, for routes that only read it (see `@AcceptsYaml`). */
export const YAML_MEDIA_TYPES = ['text/yaml', 'application/x-yaml', 'application/yaml', 'text/x-yaml'] as const;
export const PLAIN_TEXT_MEDIA_TYPE = 'text/plain';

/**
 * JSON and text body parsers bounded by the configured limit. Nest's default
 * parsers are off (`bodyParser: false`): they would cap JSON at 100 kB before
 * ours ran. Their errors (http-errors with a `type`) become StageflowErrors here,
 * so the one exception filter answers them like everything else.
 */
export function installBodyParsers(app: NestExpressApplication, limitBytes: number): void {
  app.useBodyParser('json', { limit: limitBytes, type: [...JSON_MEDIA_TYPES], reviver: refuseProtoKeys });
  app.useBodyParser('text', { limit: limitBytes, type: [...YAML_MEDIA_TYPES, PLAIN_TEXT_MEDIA_TYPE] });
  app.use((err: unknown, _req: HttpRequest, _res: HttpResponse, next: NextFunction) => next(bodyParserError(err, limitBytes)));
}

/**
 * JSON.parse makes `"__proto__"` an own key; class-transformer then assigns it
 * and swaps the DTO's prototype, which slips values past validation. No
 * Stageflow body needs that key, so a body holding it anywhere is refused.
 */
class ProtoKeyError extends SyntaxError {}

function refuseProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new ProtoKeyError('"__proto__" is not accepted as a JSON key');
  return value;
}

/** Maps a body-parser failure to the error a client sees; anything else passes through unchanged. */
export function bodyParserError(err: unknown, limitBytes: number): unknown {
  const type = typeof err === 'object' && err !== null ? (err as { type?: unknown }).type : undefined;
  switch (type) {
    case 'entity.parse.failed':
      if (err instanceof ProtoKeyError) {
        return new StageflowError('invalid_request', 'The body uses the key "__proto__", which is not accepted anywhere: remove it.', 400, [
          { field: '__proto__', problem: 'is not accepted as a key' },
        ]);
      }
      return new StageflowError(
        'invalid_json',
        'The body is not valid JSON (it must be one JSON object): check quoting and commas, or the Content-Type.',
        400,
      );
    case 'entity.too.large':
      return new StageflowError(
        'body_too_large',
        `The body is larger than this api accepts (${limitBytes} bytes, STAGEFLOW_API_BODY_LIMIT).`,
        413,
        { limitBytes },
      );
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new StageflowError(
        'unsupported_media_type',
        'The body\'s charset or Content-Encoding is not supported: send UTF-8, optionally gzip or deflate.',
        415,
      );
    case 'request.aborted':
    case 'request.size.invalid':
      return new StageflowError('incomplete_body', 'The body ended before its Content-Length: send it again.', 400);
    default:
      return err;
  }
}
