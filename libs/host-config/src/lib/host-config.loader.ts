import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HostConfigError } from './host-config.errors';
import { defaultHostConfig, HostConfig } from './host-config.model';
import { parseHostConfig } from './host-config.parser';

/** The one file access the loader needs, so tests can hand it a string. */
export interface HostConfigFs {
  /** The file's text, or `undefined` when it does not exist. Other failures throw. */
  readFile(path: string): string | undefined;
}

/** {@link HostConfigFs} on the real file system. */
export const nodeHostConfigFs: HostConfigFs = {
  readFile(path) {
    try {
      return readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  },
};

/** `$STAGEFLOW_HOME/config.yaml`. */
export function hostConfigPath(home: string): string {
  return join(home, 'config.yaml');
}

/**
 * Reads and validates `$STAGEFLOW_HOME/config.yaml` once, at Host boot.
 * A missing file means every default. Synchronous, like the env config: it
 * runs before the app is built.
 *
 * @param home - the Stageflow home (`ServiceConfig.home`)
 * @param fs - file access; the real file system by default
 * @throws {@link HostConfigError} (`host_config_invalid`) when the file is unreadable or invalid
 */
export function loadHostConfig(home: string, fs: HostConfigFs = nodeHostConfigFs): HostConfig {
  const file = hostConfigPath(home);
  let source: string | undefined;
  try {
    source = fs.readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new HostConfigError(file, [
      {
        path: '',
        line: 1,
        column: 1,
        message: `The file cannot be read (${code}); check that it is a file the Host's user can read`,
      },
    ]);
  }
  return source === undefined ? defaultHostConfig() : parseHostConfig(source, file);
}
