import { ValidationError, ValidationPipe } from '@nestjs/common';
import type { FieldProblem } from './error-response.dto';
import { invalidRequest } from './request-errors';

/** Flattens class-validator's tree into `{field, problem}` pairs with dotted paths (`stages.0.id`). */
export function toFieldProblems(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const [constraint, text] of Object.entries(error.constraints ?? {})) {
      // class-validator's own wording ("property x should not exist") does not say what to do.
      const problem = constraint === 'whitelistValidation' ? 'is not a known field; remove it' : text;
      out.push({ field, problem });
    }
    if (error.children?.length) out.push(...toFieldProblems(error.children, field));
  }
  return out;
}

/**
 * The api's one ValidationPipe: unknown fields are refused (not silently
 * dropped), values are transformed into the DTO classes, and every failure
 * becomes a 400 `invalid_request` listing `{field, problem}`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    // A query string can hold ?x=1&x=2 or a body can hold a nested object; never coerce silently.
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => invalidRequest(toFieldProblems(errors)),
  });
}
