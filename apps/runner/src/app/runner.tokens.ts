/** The runner's validated config (RunnerConfig from @stageflow/config). */
export const RUNNER_CONFIG = Symbol('RUNNER_CONFIG');
/** Resolved RunnerOptions. */
export const RUNNER_OPTIONS = Symbol('RUNNER_OPTIONS');
