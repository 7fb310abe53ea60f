import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { ACCEPTS_YAML, AcceptsYamlOptions } from './accepts-yaml.decorator';
import { JSON_MEDIA_TYPES, PLAIN_TEXT_MEDIA_TYPE, YAML_MEDIA_TYPES } from './body-parsers';
import { invalidRequest, unsupportedMediaType } from './request-errors';
import type { HttpRequest } from './http-request';

/**
 * Runs before the ValidationPipe and decides what a body may be: a JSON object
 * everywhere, raw YAML only on `@AcceptsYaml` routes (wrapped as `{ yaml }` so the
 * route's DTO validates both forms), nothing else. Without it a form post or a
 * JSON array would reach the DTO as `{}` or a list and fail with a misleading message.
 */
@Injectable()
export class RequestBodyInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const yaml = this.reflector.get<Required<AcceptsYamlOptions> | undefined>(ACCEPTS_YAML, context.getHandler());
    const accepted = [
      ...JSON_MEDIA_TYPES,
      ...(yaml ? YAML_MEDIA_TYPES : []),
      ...(yaml?.plainText ? [PLAIN_TEXT_MEDIA_TYPE] : []),
    ];
    const body: unknown = req.body;
    if (body === undefined) {
      if (hasBody(req)) throw unsupportedMediaType(accepted);
    } else if (typeof body === 'string') {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const textAllowed = yaml && (type !== PLAIN_TEXT_MEDIA_TYPE || yaml.plainText);
      if (!textAllowed) throw unsupportedMediaType(accepted);
      req.body = { yaml: body };
    } else if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalidRequest([{ field: 'body', problem: 'must be a JSON object' }]);
    }
    return next.handle();
  }
}

function hasBody(req: HttpRequest): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
