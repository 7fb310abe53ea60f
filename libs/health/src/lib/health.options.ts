/** What the health module needs to know about the process it reports on. */
export interface HealthOptions {
  /** The service's name, as it appears in logs and in `GET /health`. */
  service: string;
  /** The Redis the service uses; probed on a connection of its own. */
  redisUrl: string;
}

export const HEALTH_OPTIONS = Symbol('HEALTH_OPTIONS');
