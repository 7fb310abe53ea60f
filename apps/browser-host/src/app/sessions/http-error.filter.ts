import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { StageflowError } from '@stageflow/contracts';

export interface ErrorBody {
  code: string;
  message: string;
  details?: unknown;
}

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  /** Unexpected: logged with its stack, never described to the client. */
  unexpected: boolean;
}

const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'route_not_found',
  405: 'method_not_allowed',
  413: 'body_too_large',
  415: 'unsupported_media_type',
};

function isErrorBody(value: unknown): value is ErrorBody {
  const v = value as Partial<ErrorBody> | null;
  return typeof v === 'object' && v !== null && typeof v.code === 'string' && typeof v.message === 'string';
}

/** The reply for any thrown value: pure, so every branch is unit-tested. */
export function toErrorReply(exception: unknown): ErrorReply {
  if (exception instanceof StageflowError && exception.status >= 400 && exception.status <= 599) {
    const body: ErrorBody = { code: exception.code, message: exception.message };
    if (exception.details !== undefined) body.details = exception.details;
    return { status: exception.status, body, unexpected: false };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const response = exception.getResponse();
    // Our own HttpExceptions (GET /health's 503) already carry {code, message}.
    if (isErrorBody(response)) return { status, body: response, unexpected: false };
    if (status < 500) {
      return { status, body: { code: HTTP_CODES[status] ?? 'bad_request', message: exception.message }, unexpected: false };
    }
  }
  return {
    status: 500,
    body: {
      code: 'internal_error',
      message: 'browser-host failed unexpectedly; the error is in its log. Try again, and report it if it repeats.',
    },
    unexpected: true,
  };
}

/** browser-host's one exception filter: every error leaves as `{code, message, details?}`, no stack traces. */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly log = new Logger('HttpErrorFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<{ method?: string; url?: string }>();
    const res = host.switchToHttp().getResponse<{ headersSent?: boolean }>();
    const reply = toErrorReply(exception);
    if (reply.unexpected) {
      const err = exception instanceof Error ? exception : new Error(String(exception));
      this.log.error({ msg: `${req.method} ${req.url} failed: ${err.message}`, stack: err.stack });
    }
    if (res.headersSent) return;
    this.adapterHost.httpAdapter.reply(res, reply.body, reply.status);
  }
}
