/** The service's name, as it appears in logs and in `GET /health`. */
export const SERVICE_NAME = 'browser-host';

/** Nest injection token for this process's validated `ServiceConfig` (from `@stageflow/config`). */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
