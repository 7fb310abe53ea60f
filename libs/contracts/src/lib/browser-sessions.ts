import { ContractViolationError } from './errors';

/**
 * The runner ↔ browser-host contract: a browser stage asks browser-host for a
 * stage session (its own tab in the run's shared browser, or in a throw-away
 * browser), and closes it when the stage ends. browser-host serves these over
 * HTTP on its internal address; the bodies below are validated on both sides.
 * Nothing here ever carries a profile path.
 */
export const BROWSER_SESSION_ROUTES = {
  /** POST: open a stage session. Body {@link OpenStageSessionRequest}, 201 {@link StageSession}. */
  open: '/internal/sessions',
  /** DELETE `/internal/sessions/:sessionId`: close the tab and the agent-browser session (idempotent, 204). */
  close: '/internal/sessions/',
} as const;

export interface OpenStageSessionRequest {
  runId: string;
  stageId: string;
  attempt: number;
  /** Profile name (one safe segment); absent = a throw-away browser with a temporary profile. */
  profile?: string;
  /** Fencing token of the run's lease on `profile`; required with `profile`. browser-host refuses a stale one. */
  leaseToken?: number;
  headed: boolean;
  /** Enforced at the browser for throw-away browsers; soft (audited) for profile browsers. */
  allowDomains: string[];
  checkUrl?: string;
  loginUrl?: string;
}

export interface StageSession {
  sessionId: string;
  /** Opaque id of the shared (or throw-away) browser, for logs. */
  browserId: string;
  /** `ws://…/devtools/browser/…` the stage attaches to (AGENT_BROWSER_CDP). */
  cdpEndpoint: string;
  /** The stage's own tab (STAGEFLOW_CDP_TARGET). */
  targetId: string;
  /** Per-run folder for agent-browser's sockets (AGENT_BROWSER_SOCKET_DIR). */
  socketDir: string;
  /** How the browser shows: on a screen, a private Xvfb display, or headless. */
  headedMode: 'display' | 'xvfb' | 'headless';
  /** Environment the stage process gets (AGENT_BROWSER_*, STAGEFLOW_CDP_TARGET); never a profile path. */
  env: Record<string, string>;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const PROFILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Validates an open-session request where browser-host receives it. */
export function parseOpenStageSessionRequest(raw: unknown): OpenStageSessionRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractViolationError('open stage session request', ['expected an object']);
  }
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  const allowed = ['runId', 'stageId', 'attempt', 'profile', 'leaseToken', 'headed', 'allowDomains', 'checkUrl', 'loginUrl'];
  for (const key of Object.keys(r)) if (!allowed.includes(key)) problems.push(`unknown field "${key}"`);
  if (typeof r['runId'] !== 'string' || !ID.test(r['runId'])) problems.push('runId must be an id string');
  if (typeof r['stageId'] !== 'string' || !ID.test(r['stageId'])) problems.push('stageId must be an id string');
  if (typeof r['attempt'] !== 'number' || !Number.isInteger(r['attempt']) || r['attempt'] < 1) {
    problems.push('attempt must be a positive integer');
  }
  if (r['profile'] !== undefined) {
    if (typeof r['profile'] !== 'string' || !PROFILE.test(r['profile']) || r['profile'].includes('..')) {
      problems.push('profile must be a profile name (one safe path segment)');
    }
    if (typeof r['leaseToken'] !== 'number' || !Number.isInteger(r['leaseToken']) || r['leaseToken'] < 1) {
      problems.push('leaseToken must be the positive integer fencing token of the run\'s lease');
    }
  } else if (r['leaseToken'] !== undefined) {
    problems.push('leaseToken is only valid with a profile');
  }
  if (typeof r['headed'] !== 'boolean') problems.push('headed must be a boolean');
  if (!Array.isArray(r['allowDomains']) || r['allowDomains'].some((d) => typeof d !== 'string' || d.length > 253)) {
    problems.push('allowDomains must be a list of host names');
  }
  for (const key of ['checkUrl', 'loginUrl']) {
    const v = r[key];
    if (v !== undefined && (typeof v !== 'string' || !/^https?:\/\//.test(v) || v.length > 2048)) {
      problems.push(`${key} must be an http(s) URL`);
    }
  }
  if (problems.length) throw new ContractViolationError('open stage session request', problems);
  return r as unknown as OpenStageSessionRequest;
}

/**
 * POST: "Reopen browser tab" for a stage session (live view): browser-host opens the
 * tab's address in a fresh tab of the same browser, binds the stage's agent-browser
 * session to it, records it as the session's tab and closes the old one. No body;
 * 200 {@link ReopenedStageSession}; `429 reopen_too_soon` within 2 s of the last one.
 */
export function reopenSessionRoute(sessionId: string): string {
  return `/internal/sessions/${encodeURIComponent(sessionId)}/reopen`;
}

export interface ReopenedStageSession {
  /** The new tab, now the session's `targetId`. */
  targetId: string;
  /** The address opened in it (the old tab's). */
  url: string;
}

/** Validates browser-host's answer where the relay receives it. */
export function parseReopenedStageSession(raw: unknown): ReopenedStageSession {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractViolationError('reopened stage session', ['expected an object']);
  }
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof r['targetId'] !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(r['targetId'])) problems.push('targetId must be a CDP target id');
  if (typeof r['url'] !== 'string' || r['url'].length > 8192) problems.push('url must be a string');
  if (problems.length) throw new ContractViolationError('reopened stage session', problems);
  return { targetId: r['targetId'] as string, url: r['url'] as string };
}
