import { StageflowError } from '@stageflow/contracts';
import type { FieldProblem } from './error-response.dto';

/** Most problems listed in one `invalid_request` response; the rest are counted, not listed. */
const MAX_LISTED = 20;

/** A 400 `invalid_request` naming each offending field, e.g. from the ValidationPipe or a cross-field rule. */
export function invalidRequest(problems: FieldProblem[]): StageflowError {
  const listed = problems.slice(0, MAX_LISTED);
  const more = problems.length > MAX_LISTED ? ` (and ${problems.length - MAX_LISTED} more)` : '';
  const message = `The request is invalid: ${listed.map((p) => `${p.field}: ${p.problem}`).join('; ')}${more}.`;
  return new StageflowError('invalid_request', message, 400, listed);
}

/** 415: the body's content type is not one this route reads. */
export function unsupportedMediaType(accepted: readonly string[]): StageflowError {
  return new StageflowError(
    'unsupported_media_type',
    `This route reads a body sent as ${accepted.join(', ')}; set the Content-Type header to one of them.`,
    415,
  );
}
