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
  /**
   * POST `/internal/sessions/:sessionId/activity`: what a profile stage with `allow_domains`
   * navigated to, for the soft allowlist audit. Body {@link StageActivityReport}, 204. Sent
   * once, when the attempt ends and before the close; also accepted after the session closed.
   */
  activity: (sessionId: string): string => `/internal/sessions/${encodeURIComponent(sessionId)}/activity`,
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
  /**
   * A human login gate's session: a browser the operator can see (headed whatever
   * `headed` says; see {@link LoginHandoff}), its tab opened at `loginUrl` (or
   * `checkUrl`). Refused with `login_needs_screen` when the Host can show neither.
   */
  login?: boolean;
}

/** How a login gate hands the browser to the operator (spec: "What each Host shows"). */
export type LoginHandoff = 'local_window' | 'live_view';

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
  /**
   * The run's browser for this profile had died (crash, out of memory, killed) and was
   * restarted for this session: cookies it set shortly before may be lost, so the
   * runner re-verifies the login when the run has a `browser.check` for the profile.
   */
  restarted?: boolean;
  /** Only for a login session: how the operator sees the browser. */
  handoff?: LoginHandoff;
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
  const allowed = ['runId', 'stageId', 'attempt', 'profile', 'leaseToken', 'headed', 'allowDomains', 'checkUrl', 'loginUrl', 'login'];
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
  if (r['login'] !== undefined) {
    if (typeof r['login'] !== 'boolean') problems.push('login must be a boolean');
    else if (r['login'] && r['profile'] === undefined) problems.push('a login session needs a profile: the login is kept there');
    else if (r['login'] && r['loginUrl'] === undefined && r['checkUrl'] === undefined) {
      problems.push('a login session needs loginUrl or checkUrl: the page the operator signs in on');
    }
  }
  if (problems.length) throw new ContractViolationError('open stage session request', problems);
  return r as unknown as OpenStageSessionRequest;
}

/**
 * Why the runner could not tell browser-host what a profile stage navigated to; becomes the
 * `reason` of an `allowlist_unverified` audit record.
 * - `activity_unreadable`: the stage's activity file was missing (e.g. the stage deleted it),
 *   unreadable or corrupt, or could not be set up.
 * - `activity_too_large`: the file or its host list passed the limits; the hosts sent are a part.
 * - `agent_browser_not_found`: no `agent-browser` was on the stage's PATH when it started, so no
 *   call could be recorded.
 */
export const ACTIVITY_UNVERIFIED_REASONS = ['activity_unreadable', 'activity_too_large', 'agent_browser_not_found'] as const;
export type ActivityUnverifiedReason = (typeof ACTIVITY_UNVERIFIED_REASONS)[number];

/** The most hosts one report carries. */
export const ACTIVITY_REPORT_MAX_HOSTS = 1000;

/**
 * A lowercased ASCII (punycode) hostname or IPv4, or a bracketed IPv6 literal, as the
 * audit log stores it: no scheme, port, path or credentials.
 */
export const NAVIGATION_HOST = /^(?:[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?|\[[0-9a-f:.]{2,45}\])$/;

/**
 * The runner's report of a profile stage's explicit agent-browser navigations
 * (`open|goto|navigate|tab new <url>`), recorded by its `agent-browser` wrapper. Hosts only:
 * a URL's path or query may carry a token. browser-host checks them against the
 * `allowDomains` of the open request and writes the audit records.
 */
export interface StageActivityReport {
  /** Each host the stage navigated to, once, in order of first navigation; allowed or not. */
  navigationHosts: string[];
  /** Set when the hosts are not the whole story (see {@link ACTIVITY_UNVERIFIED_REASONS}). */
  unverified?: ActivityUnverifiedReason;
}

/** Validates an activity report where browser-host receives it. */
export function parseStageActivityReport(raw: unknown): StageActivityReport {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractViolationError('stage activity report', ['expected an object']);
  }
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(r)) if (key !== 'navigationHosts' && key !== 'unverified') problems.push(`unknown field "${key}"`);
  const hosts = r['navigationHosts'];
  if (!Array.isArray(hosts)) {
    problems.push('navigationHosts must be a list of host names (an empty list when the stage navigated nowhere)');
  } else {
    if (hosts.length > ACTIVITY_REPORT_MAX_HOSTS) {
      problems.push(`navigationHosts has ${hosts.length} entries; send at most ${ACTIVITY_REPORT_MAX_HOSTS} with unverified "activity_too_large"`);
    }
    const bad = hosts.findIndex((h) => typeof h !== 'string' || !NAVIGATION_HOST.test(h));
    // The index only: the value may be whatever a stage typed.
    if (bad !== -1) problems.push(`navigationHosts[${bad}] must be a lowercased host name without scheme, port or path`);
    if (new Set(hosts).size !== hosts.length) problems.push('navigationHosts must list each host once');
  }
  const unverified = r['unverified'];
  if (unverified !== undefined && !(ACTIVITY_UNVERIFIED_REASONS as readonly unknown[]).includes(unverified)) {
    problems.push(`unverified must be one of ${ACTIVITY_UNVERIFIED_REASONS.join(', ')}`);
  }
  if (problems.length) throw new ContractViolationError('stage activity report', problems);
  return r as unknown as StageActivityReport;
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
