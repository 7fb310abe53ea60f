import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The parts of Express's request the api reads. Spelled out here because
 * `express` is only a transitive dependency (via @nestjs/platform-express).
 */
export type HttpRequest = IncomingMessage & { body?: unknown; path?: string };
export type HttpResponse = ServerResponse;
export type NextFunction = (err?: unknown) => void;
