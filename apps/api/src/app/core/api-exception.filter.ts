import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { StageflowError } from '@stageflow/contracts';
import type { ErrorResponseDto } from './error-response.dto';
import type { HttpRequest, HttpResponse } from './http-request';

export interface ErrorReply {
  status: number;
  body: ErrorResponseDto;
  /** Unexpected: logged with its stack, never described to the client. */
  unexpected: boolean;
}

/** Codes for the few HttpExceptions Nest itself raises (routing, URI decoding). */
const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  405: 'method_not_allowed',
  413: 'body_too_large',
  415: 'unsupported_media_type',
};

/** The reply for any thrown value: pure, so every branch is unit-tested. */
export function toErrorReply(exception: unknown, req: { method?: string; path?: string }): ErrorReply {
  if (exception instanceof StageflowError && exception.status >= 400 && exception.status <= 599) {
    const body: ErrorResponseDto = { code: exception.code, message: exception.message };
    if (exception.details !== undefined) body.details = exception.details;
    return { status: exception.status, body, unexpected: false };
  }
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    const status = exception.getStatus();
    if (status === 404) {
      return {
        status,
        body: {
          code: 'route_not_found',
          message: `There is no route ${req.method ?? ''} ${req.path ?? ''}: the routes are listed at /api/docs.`,
        },
        unexpected: false,
      };
    }
    return { status, body: { code: HTTP_CODES[status] ?? 'bad_request', message: exception.message }, unexpected: false };
  }
  return {
    status: 500,
    body: {
      code: 'internal_error',
      message: 'The api failed unexpectedly; the error is in its log. Try again, and report it if it repeats.',
    },
    unexpected: true,
  };
}

/** The api's one exception filter: every error leaves as `{code, message, details?}`. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    // WebSocket sessions answer their own errors on the socket (see EventSession).
    if (host.getType() !== 'http') return;
    const req = host.switchToHttp().getRequest<HttpRequest>();
    const res = host.switchToHttp().getResponse<HttpResponse>();
    const reply = toErrorReply(exception, req);
    if (reply.unexpected) {
      const err = exception instanceof Error ? exception : new Error(String(exception));
      this.logger.error(`${req.method} ${req.path} failed: ${err.message}`, err.stack);
    }
    if (res.headersSent) return;
    if (reply.body.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
    this.adapterHost.httpAdapter.reply(res, reply.body, reply.status);
  }
}
