import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { HeadedMode } from './browser-host.port';

export interface ScreenFacts {
  platform: NodeJS.Platform;
  display?: string;
  waylandDisplay?: string;
  /** Xvfb binary, or undefined when there is none. */
  xvfbPath?: string;
}

/**
 * What `headed: true` gets here. macOS and Windows always have a screen; Linux needs
 * `DISPLAY` or `WAYLAND_DISPLAY`, else a private Xvfb, else it quietly runs headless.
 */
export function headedModeFor(facts: ScreenFacts): HeadedMode {
  if (facts.platform === 'darwin' || facts.platform === 'win32') return 'display';
  if (facts.display || facts.waylandDisplay) return 'display';
  if (facts.xvfbPath) return 'xvfb';
  return 'headless';
}

/** First executable `name` on a PATH-style list, or undefined. */
export function findOnPath(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
