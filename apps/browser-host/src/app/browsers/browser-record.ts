import type { HeadedMode } from '@stageflow/browser-hosts';

/** Where a browser runs: a Chromium process of this Host, or a container of the container host. */
export type BrowserHostKind = 'local' | 'container';

/** The endpoint rule is shared with the session record codec (`@stageflow/contracts`). */
export { isBrowserEndpoint } from '@stageflow/contracts';
import { isBrowserEndpoint } from '@stageflow/contracts';

/**
 * A browser in browser-host's registry (Redis hash `sf:browser:<id>`). What a restarted
 * host needs to find and re-adopt it, and what logs and the relay need to name it.
 * Never a profile path: the folder is asked of the profile store when needed.
 */
export interface BrowserRecord {
  browserId: string;
  /** `shared`: the run's browser for a profile; `throwaway`: one stage session's, on a temporary profile. */
  kind: 'shared' | 'throwaway';
  /** The browser-host (`STAGEFLOW_HOST_ID`) whose process runs it. */
  hostId: string;
  /** `local` (a Chromium process; also what a record from before the container host means) or `container`. */
  host: BrowserHostKind;
  /** Container host: the browser's container. */
  containerId?: string;
  runId: string;
  /** Shared browsers: the owner scope and profile name. */
  scope?: string;
  profile?: string;
  /** Throw-away browsers: the one stage session using it. */
  sessionId?: string;
  /** The Chromium process; for a container, its init process as the Docker host sees it. */
  pid: number;
  cdpPort: number;
  /** `ws://127.0.0.1:<port>/devtools/browser/<id>`; a container on the stack network: its address there. */
  wsEndpoint: string;
  headedMode: HeadedMode;
  /** Shared browsers: the fencing token of the lease the browser was last handed out under. */
  leaseToken?: number;
  /** ISO 8601. */
  startedAt: string;
}

const HEADED_MODES: readonly HeadedMode[] = ['display', 'xvfb', 'headless'];

/** The record as Redis hash fields (absent optionals are left out). */
export function browserRecordToHash(record: BrowserRecord): Record<string, string> {
  const hash: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== undefined) hash[key] = String(value);
  }
  return hash;
}

/** Parses a registry hash; `undefined` for an empty or malformed one (logged and skipped by the caller). */
export function browserRecordFromHash(hash: Record<string, string>): BrowserRecord | undefined {
  const int = (key: string): number | undefined => {
    const raw = hash[key];
    if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
    return Number(raw);
  };
  const { browserId, kind, hostId, runId, wsEndpoint, headedMode, startedAt } = hash;
  const pid = int('pid');
  const cdpPort = int('cdpPort');
  if (!browserId || !hostId || !runId || !startedAt || pid === undefined || cdpPort === undefined) return undefined;
  if (kind !== 'shared' && kind !== 'throwaway') return undefined;
  const host = hash['host'] ?? 'local';
  if (host !== 'local' && host !== 'container') return undefined;
  // Throw-away browsers always run locally; only a container may sit on another address.
  if (host === 'container' && kind !== 'shared') return undefined;
  if (!isBrowserEndpoint(wsEndpoint, host === 'container')) return undefined;
  if (!HEADED_MODES.includes(headedMode as HeadedMode)) return undefined;
  if (kind === 'shared' && (!hash['scope'] || !hash['profile'])) return undefined;
  const record: BrowserRecord = {
    browserId,
    kind,
    hostId,
    host,
    runId,
    pid,
    cdpPort,
    wsEndpoint,
    headedMode: headedMode as HeadedMode,
    startedAt,
  };
  if (hash['scope']) record.scope = hash['scope'];
  if (hash['profile']) record.profile = hash['profile'];
  if (hash['sessionId']) record.sessionId = hash['sessionId'];
  if (host === 'container' && /^[0-9a-f]{12,64}$/.test(hash['containerId'] ?? '')) record.containerId = hash['containerId'];
  const token = int('leaseToken');
  if (token !== undefined) record.leaseToken = token;
  return record;
}
