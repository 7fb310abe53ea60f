import type { StageSession } from './browser-sessions';

/** A request a throw-away browser's allowlist refused (first per host), as `GET /internal/sessions/:id` shows it. */
export interface BlockedRequest {
  host: string;
  /** Without credentials, query or fragment. */
  url: string;
  /** CDP resource type: `Document`, `Image`, `Script`, `XHR`… */
  resourceType: string;
  /** ISO 8601. */
  at: string;
}

/**
 * One stage session in browser-host's registry (Redis hash `sf:browser-session:<id>`,
 * {@link RedisKeys.hostSession}): its tab in a browser, and the agent-browser session
 * the stage attaches with. The session id is also the agent-browser session name.
 * Never a profile path. browser-host writes it; the api and live-view-relay read it
 * (which stage has an open browser, and where its tab is) with
 * {@link sessionRecordFromHash}, so the codec lives here.
 */
export interface SessionRecord {
  sessionId: string;
  hostId: string;
  runId: string;
  stageId: string;
  attempt: number;
  kind: 'shared' | 'throwaway';
  browserId: string;
  scope?: string;
  profile?: string;
  /** The stage's own tab (STAGEFLOW_CDP_TARGET). */
  targetId: string;
  cdpEndpoint: string;
  /** The run's agent-browser socket dir (AGENT_BROWSER_SOCKET_DIR). */
  socketDir: string;
  headedMode: StageSession['headedMode'];
  /** ISO 8601. */
  openedAt: string;
  blocked: BlockedRequest[];
}

const HEADED_MODES: readonly string[] = ['display', 'xvfb', 'headless'];

export function sessionRecordToHash(record: SessionRecord): Record<string, string> {
  const hash: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    hash[key] = key === 'blocked' ? JSON.stringify(value) : String(value);
  }
  return hash;
}

/** Parses a registry hash; `undefined` for an empty or malformed one. */
export function sessionRecordFromHash(hash: Record<string, string>): SessionRecord | undefined {
  const { sessionId, hostId, runId, stageId, kind, browserId, targetId, cdpEndpoint, socketDir, headedMode, openedAt } = hash;
  const attempt = Number(hash['attempt']);
  if (!sessionId || !hostId || !runId || !stageId || !browserId || !targetId || !socketDir || !openedAt) return undefined;
  if (kind !== 'shared' && kind !== 'throwaway') return undefined;
  if (!Number.isInteger(attempt) || attempt < 1) return undefined;
  if (!isBrowserEndpoint(cdpEndpoint, kind === 'shared') || !HEADED_MODES.includes(headedMode)) return undefined;
  let blocked: BlockedRequest[] = [];
  try {
    const parsed: unknown = JSON.parse(hash['blocked'] ?? '[]');
    if (Array.isArray(parsed)) blocked = parsed as BlockedRequest[];
  } catch {
    // A torn list loses the report, not the session.
  }
  const record: SessionRecord = {
    sessionId,
    hostId,
    runId,
    stageId,
    attempt,
    kind,
    browserId,
    targetId,
    cdpEndpoint,
    socketDir,
    headedMode: headedMode as StageSession['headedMode'],
    openedAt,
    blocked,
  };
  if (hash['scope']) record.scope = hash['scope'];
  if (hash['profile']) record.profile = hash['profile'];
  return record;
}

const ENDPOINT = /^ws:\/\/(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})\/devtools\/browser\/[A-Za-z0-9-]+$/;

/**
 * A browser-level CDP endpoint on an IPv4 address: loopback for a browser on this
 * machine; a shared browser of the container host may sit on a container's address.
 */
export function isBrowserEndpoint(wsEndpoint: string | undefined, anyAddress: boolean): boolean {
  const m = ENDPOINT.exec(wsEndpoint ?? '');
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return false;
  return anyAddress || m[1] === '127.0.0.1';
}
