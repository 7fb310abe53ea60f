import { type ApiConfig, ConfigError } from '@stageflow/config';

/**
 * Loads the api config; on a ConfigError prints its message (every problem and
 * what to do about it, for the person starting the api) and exits 1. Any other
 * error is a bug and propagates.
 */
export function configOrExit(
  load: () => ApiConfig,
  write: (text: string) => void = (text) => process.stderr.write(text),
  exit: (code: number) => never = (code) => process.exit(code),
): ApiConfig {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    write(`${error.message}\n`);
    return exit(1);
  }
}
