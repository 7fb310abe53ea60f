/**
 * A failure a person can act on. `code` is stable (clients and tests match on
 * it); `message` says what happened and what to do next; `details` is optional
 * structured context. Each app has one exception filter mapping codes to HTTP
 * statuses via {@link StageflowError.status}.
 */
export class StageflowError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'StageflowError';
  }
}

export class NotFoundError extends StageflowError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, 404, details);
  }
}

export class ConflictError extends StageflowError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, 409, details);
  }
}

/** A message entering a process (job payload, WebSocket frame, Redis record) did not match its schema. */
export class ContractViolationError extends StageflowError {
  constructor(what: string, problems: string[]) {
    super('contract_violation', `${what} is malformed: ${problems.join('; ')}`, 400, { problems });
  }
}
