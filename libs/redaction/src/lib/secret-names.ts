import type { RedactionKind } from './redaction-marker';

/** Where a name was found; some words are secret in one place only. */
export type NameContext = 'key' | 'flag' | 'query' | 'cookie';

/** Words that make a key secret, with the kind they stand for. */
const SECRET_WORDS: Readonly<Record<string, RedactionKind>> = {
  password: 'password',
  passwd: 'password',
  passphrase: 'password',
  otp: 'password',
  secret: 'secret',
  secrets: 'secret',
  token: 'token',
  cookie: 'cookie',
  cookies: 'cookie',
  setcookie: 'cookie',
  authorization: 'authorization',
  auth: 'authorization',
  session: 'session',
  sessionid: 'session',
  sessid: 'session',
  sid: 'session',
  jwt: 'jwt',
  bearer: 'bearer',
  credential: 'credentials',
  credentials: 'credentials',
  csrf: 'csrf',
  xsrf: 'csrf',
  apikey: 'api_key',
  privatekey: 'private_key',
  signature: 'signature',
  sig: 'signature',
};

/** Two-word names: `api_key`, `access_key`, `private_key`... */
const SECRET_PAIRS: readonly [string, string, RedactionKind][] = [
  ['api', 'key', 'api_key'],
  ['access', 'key', 'api_key'],
  ['secret', 'key', 'secret'],
  ['private', 'key', 'private_key'],
  ['master', 'key', 'secret'],
  ['signing', 'key', 'secret'],
  ['encryption', 'key', 'secret'],
  ['session', 'key', 'session'],
];

/** One-word names glued together: `accesstoken`, `PHPSESSID`, `JSESSIONID`, `xsrftoken`. */
const SECRET_SUFFIXES: readonly [string, RedactionKind][] = [
  ['token', 'token'],
  ['password', 'password'],
  ['passwd', 'password'],
  ['secret', 'secret'],
  ['apikey', 'api_key'],
  ['sessionid', 'session'],
  ['sessid', 'session'],
];

/** Only in URL query strings: `?key=AIza...` (Google), `?sig=` (SAS), `?code=` (OAuth). */
const QUERY_WORDS: Readonly<Record<string, RedactionKind>> = {
  key: 'api_key',
  code: 'token',
  ticket: 'token',
  pass: 'password',
  pwd: 'password',
};

/**
 * A word after the secret word that makes the key describe the secret
 * instead of holding it: `token_count`, `password_policy`, `expires_in`,
 * `--password-store`.
 */
// prettier-ignore
const QUALIFIERS = new Set([
  'count', 'counts', 'type', 'types', 'limit', 'limits', 'length', 'len', 'usage', 'used',
  'expiry', 'expires', 'expiration', 'exp', 'ttl', 'age', 'timeout', 'at', 'in', 'url',
  'uri', 'urls', 'endpoint', 'path', 'file', 'filename', 'dir', 'store', 'storage', 'name',
  'names', 'field', 'fields', 'label', 'prefix', 'format', 'policy', 'hint', 'strength', 'required',
  'enabled', 'disabled', 'present', 'exists', 'valid', 'set', 'changed', 'updated', 'created', 'min',
  'max', 'mode', 'method', 'methods', 'provider', 'strategy', 'flow', 'status', 'version', 'domain',
  'host', 'scope', 'scopes', 'index', 'kind', 'rotation', 'reset',
]);

/** Whole names that look secret and are not. */
// document.cookie: its assignment has its own rule, which keeps the cookie's name.
const NOT_SECRET = new Set([
  'agent_browser_session',
  'document_cookie',
  'x_amz_algorithm',
  'x_amz_signed_headers',
  'x_amz_date',
  'x_amz_expires',
]);

/** Cookie names that hold a login even without a secret word (`li_at`, Google's `SAPISID`, `remember_me`). */
const SESSION_COOKIE =
  /sess|sid|auth|token|csrf|xsrf|jwt|login|logged|remember|secret|^__(?:secure|host)-|^li_at$|user_?id|^uid$/i;

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * The kind of secret a key, flag, query parameter or cookie name holds, or
 * `undefined` when its value is not a secret.
 */
export function secretKindOfName(name: string, context: NameContext = 'key'): RedactionKind | undefined {
  const w = words(name);
  if (w.length === 0 || NOT_SECRET.has(w.join('_'))) return undefined;
  // agent-browser's --session names a session, it is no session secret.
  if (context === 'flag' && w.length === 1 && w[0] === 'session') return undefined;
  for (let i = w.length - 1; i >= 0; i--) {
    const word = w[i];
    const pair = i > 0 ? SECRET_PAIRS.find(([a, b]) => a === w[i - 1] && b === word) : undefined;
    const kind =
      pair?.[2] ??
      SECRET_WORDS[word] ??
      (context === 'query' ? QUERY_WORDS[word] : undefined) ??
      SECRET_SUFFIXES.find(([suffix]) => word.length > suffix.length && word.endsWith(suffix))?.[1];
    if (kind) return w.slice(i + 1).some((q) => QUALIFIERS.has(q)) ? undefined : kind;
  }
  if (context === 'cookie' && SESSION_COOKIE.test(name)) return 'cookie';
  return undefined;
}
