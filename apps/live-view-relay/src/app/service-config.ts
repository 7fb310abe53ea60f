import type { StageViewOptions } from './views/stage-view';

/** The service's name, as it appears in logs and in `GET /health`. */
export const SERVICE_NAME = 'live-view-relay';

/** Nest injection token for this process's validated `RelayConfig` (from `@stageflow/config`). */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');

/** Nest injection token for {@link StageViewOptions}: the Host config's dialog time-out and the view's tuning. */
export const STAGE_VIEW_OPTIONS = Symbol('STAGE_VIEW_OPTIONS');
export type { StageViewOptions };
