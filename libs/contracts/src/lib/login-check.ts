import { ContractViolationError } from './errors';

/**
 * The login check (`browser.check` of a stage): the runner asks browser-host to
 * open the check page in the stage's own tab and judge "logged in". The body
 * carries the criteria from the stage definition; browser-host checks the URL
 * against the blocked sites again and never returns page content.
 */
export interface LoginCheckRequest {
  /** Absolute http(s) URL of the check page. */
  url: string;
  /** Logged out if the final URL matches (a substring, or a glob with `*`). */
  loggedOutUrl?: string;
  /** Logged in only if this CSS selector is on the page. */
  selector?: string;
  /** Logged in only if a cookie with this name is set for `url`. */
  cookie?: string;
}

/** The stage's output (snake case, as the pipeline's conditions read it: `output.logged_in`). */
export interface LoginCheckResult {
  logged_in: boolean;
  /** Where the check page ended up, after redirects. */
  url: string;
}

/** POST: run the check on the session's tab. Body {@link LoginCheckRequest}, 200 {@link LoginCheckResult}. */
export function loginCheckRoute(sessionId: string): string {
  return `/internal/sessions/${encodeURIComponent(sessionId)}/check`;
}

/**
 * POST: check a profile's login now, outside any run (the console's "Check now"):
 * browser-host holds the profile's lease, starts a headless browser on it, judges,
 * closes it gracefully and releases. Body {@link LoginCheckRequest}, 200
 * {@link LoginCheckResult}; 409 `profile_leased` while a run (or another check) holds it.
 */
export function profileCheckRoute(profile: string): string {
  return `/internal/profiles/${encodeURIComponent(profile)}/check`;
}

const MAX_TEXT = 2048;

/** Validates a login-check request where browser-host receives it. */
export function parseLoginCheckRequest(raw: unknown): LoginCheckRequest {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractViolationError('login check request', ['expected an object']);
  }
  const r = raw as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(r)) {
    if (!['url', 'loggedOutUrl', 'selector', 'cookie'].includes(key)) problems.push(`unknown field "${key}"`);
  }
  if (typeof r['url'] !== 'string' || !isHttpUrl(r['url'])) problems.push('url must be an absolute http(s) URL');
  for (const key of ['loggedOutUrl', 'selector', 'cookie']) {
    const v = r[key];
    if (v !== undefined && (typeof v !== 'string' || !v.length || v.length > MAX_TEXT)) {
      problems.push(`${key} must be a non-empty string of at most ${MAX_TEXT} characters`);
    }
  }
  if (typeof r['cookie'] === 'string' && /[=;\s]/.test(r['cookie'])) problems.push('cookie must be a cookie name (no "=", ";" or spaces)');
  if (r['loggedOutUrl'] === undefined && r['selector'] === undefined && r['cookie'] === undefined) {
    problems.push('at least one of loggedOutUrl, selector and cookie is needed to judge the login');
  }
  if (problems.length) throw new ContractViolationError('login check request', problems);
  return {
    url: r['url'] as string,
    ...(r['loggedOutUrl'] !== undefined ? { loggedOutUrl: r['loggedOutUrl'] as string } : {}),
    ...(r['selector'] !== undefined ? { selector: r['selector'] as string } : {}),
    ...(r['cookie'] !== undefined ? { cookie: r['cookie'] as string } : {}),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password;
  } catch {
    return false;
  }
}
