export { ConfigError, LOG_LEVELS } from './lib/env';
export type { Env, LogLevel } from './lib/env';
export { loadApiConfig, loadRelayConfig, loadRunnerConfig, loadServiceConfig } from './lib/app-config';
export type { ApiConfig, RelayConfig, RunnerConfig, ServiceConfig, RedisConfig } from './lib/app-config';
