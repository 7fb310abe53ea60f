import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiParam, ApiResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto';

/** Documents a route's error responses: status → the codes it may carry. */
export function ApiErrors(errors: Record<number, string>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...Object.entries(errors).map(([status, codes]) =>
      ApiResponse({ status: Number(status), type: ErrorResponseDto, description: codes }),
    ),
  );
}

/** Errors every guarded route may answer with, and its bearer auth. */
export function ApiGuardedRoutes(): ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiErrors({
      401: '`unauthorized`: a token is configured and the request lacks it or has another',
      403: '`host_forbidden`, `origin_forbidden`: no token is configured and the request is not from this host',
      500: '`internal_error`',
    }),
  );
}

/** Path ids, documented with the pattern ParseIdPipe enforces. */
export function ApiIdParams(...names: string[]): MethodDecorator {
  return applyDecorators(...names.map((name) => ApiParam({ name, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$' } })));
}
