import type { StageSession } from '@stageflow/contracts';
import { createHash } from 'node:crypto';
import type { SessionRecord } from './session-record';

/** `sun_path` holds 108 bytes with its NUL. */
const UNIX_SOCKET_PATH_MAX = 107;
/** agent-browser names its daemon socket `<session>.sock` inside AGENT_BROWSER_SOCKET_DIR. */
const SOCKET_SUFFIX = '.sock';

function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * The folder name of a run's socket dir: the run id, or a digest of a long one (the
 * dir's marker file keeps the id for the sweep).
 */
export function runDirName(runId: string): string {
  return runId.length <= 32 ? runId : `r-${hash(runId, 16)}`;
}

/**
 * The stage session id, which is also its agent-browser session name
 * (AGENT_BROWSER_SESSION): one per stage attempt, `sf-<run>-<stage>-<attempt>`. When
 * `<socketDir>/<name>.sock` would not fit a unix socket path, the run and stage part
 * becomes a digest (agent-browser fails with "Use a shorter session name" otherwise).
 * agent-browser accepts letters, digits, `-` and `_`, as run and stage ids are.
 */
export function stageSessionId(runId: string, stageId: string, attempt: number, socketDir: string): string {
  const plain = `sf-${runId}-${stageId}-${attempt}`;
  const budget = UNIX_SOCKET_PATH_MAX - Buffer.byteLength(socketDir) - 1 - SOCKET_SUFFIX.length;
  if (plain.length <= budget && plain.length <= 128) return plain;
  return `sf-${hash(`${runId}\0${stageId}`, 16)}-${attempt}`;
}

/**
 * The stage process's environment for agent-browser. No profile path: the stage
 * reaches the browser through its CDP endpoint only.
 * - PIN_TAB: the session keeps to its own tab and never drifts to a parallel stage's.
 * - NO_AUTO_DIALOG: it must not accept alerts in tabs it does not own.
 * - NO_VERSION_CHECK: the check fetches a web page; this network is closed.
 */
export function stageSessionEnv(session: Pick<SessionRecord, 'cdpEndpoint' | 'sessionId' | 'socketDir' | 'targetId'>): Record<string, string> {
  return {
    AGENT_BROWSER_CDP: session.cdpEndpoint,
    AGENT_BROWSER_SESSION: session.sessionId,
    AGENT_BROWSER_PIN_TAB: '1',
    AGENT_BROWSER_NO_AUTO_DIALOG: '1',
    AGENT_BROWSER_SOCKET_DIR: session.socketDir,
    AGENT_BROWSER_NO_VERSION_CHECK: '1',
    STAGEFLOW_CDP_TARGET: session.targetId,
  };
}

/** The contract's view of a session record. */
export function toStageSession(record: SessionRecord): StageSession {
  return {
    sessionId: record.sessionId,
    browserId: record.browserId,
    cdpEndpoint: record.cdpEndpoint,
    targetId: record.targetId,
    socketDir: record.socketDir,
    headedMode: record.headedMode,
    env: stageSessionEnv(record),
  };
}
