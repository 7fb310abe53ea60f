export { ConfigError, LOG_LEVELS } from './lib/env';
export type { Env, LogLevel } from './lib/env';
export { loadApiConfig, loadRunnerConfig, loadServiceConfig } from './lib/app-config';
export type { ApiConfig, RunnerConfig, ServiceConfig, RedisConfig } from './lib/app-config';
