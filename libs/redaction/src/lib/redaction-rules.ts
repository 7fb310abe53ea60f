import { isMarker, MARKER_SOURCE, RedactionKind, redactionMarker } from './redaction-marker';
import { secretKindOfName } from './secret-names';

/**
 * One pattern and what to put in place of a match. Regexes are compiled once,
 * at module load. Every pattern starts at a word boundary or a literal prefix,
 * so a megabyte with no separators costs one linear scan, not a quadratic one.
 */
export interface RedactionRule {
  name: string;
  pattern: RegExp;
  /** Returns the match itself when there is nothing to redact. */
  replace: (match: string, ...groups: string[]) => string;
  /**
   * Group holding a value that may itself contain secrets. When the match is
   * left alone (a key that is not secret) and the value is a quoted string,
   * scanning resumes at the start of that value instead of after it:
   * `"body": "{\"token\": \"x\"}"` must still reach the inner token.
   */
  rescanGroup?: number;
}

const M = MARKER_SOURCE;

/** Values that are not secrets even under a secret name: flags, empties, placeholders, `${VAR}`. */
const PLACEHOLDER = /^(?:|true|false|null|nil|none|undefined|\*+|x+|<[^<>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)$/i;

const MARKERS_ONLY = new RegExp(`^\\s*${M}(?:\\s*${M})*\\s*$`);

/** Leave alone: already redacted (one marker or several), or a placeholder. */
function keep(value: string): boolean {
  return MARKERS_ONLY.test(value) || PLACEHOLDER.test(value.trim());
}

/** Replaces a value, keeping its quotes (JSON stays JSON); unchanged when already redacted. */
function replaceQuoted(value: string, kind: RedactionKind): string {
  for (const q of ['\\"', '"', "'"]) {
    if (value.length >= 2 * q.length && value.startsWith(q) && value.endsWith(q)) {
      const inner = value.slice(q.length, value.length - q.length);
      return keep(inner) ? value : `${q}${redactionMarker(kind)}${q}`;
    }
  }
  return keep(value) ? value : redactionMarker(kind);
}

/** Header names whose whole value is a credential. */
const HEADER_NAMES = [
  'cookie',
  'set-cookie',
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'apikey',
  'x-auth-token',
  'x-access-token',
  'x-csrf-token',
  'x-xsrf-token',
  'x-amz-security-token',
  'x-goog-api-key',
  'private-token',
  'x-session-token',
];
const HEADER_SET = new Set(HEADER_NAMES);

const AUTH_SCHEME = /^(Bearer|Basic|Token|Digest|Negotiate|NTLM|OAuth|AWS4-HMAC-SHA256)(\s+)([\s\S]*)$/i;

/** `Authorization: Bearer [redacted:...]` was handled by the header rule; a second rule must not eat "Bearer". */
function ownedByHeaderRule(name: string, sep: string, value: string): boolean {
  const last = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return HEADER_SET.has(last) && sep.includes(':') && !/^\\?["']/.test(value);
}

function headerKind(name: string): RedactionKind {
  const n = name.toLowerCase();
  if (n.includes('cookie')) return 'cookie';
  if (n.includes('authorization')) return 'authorization';
  if (n.includes('csrf') || n.includes('xsrf')) return 'csrf';
  if (n.includes('key')) return 'api_key';
  return 'token';
}

function redactHeader(_m: string, name: string, sep: string, rawValue: string): string {
  const value = rawValue.trimEnd();
  const trailing = rawValue.slice(value.length);
  const kind = headerKind(name);
  const scheme = AUTH_SCHEME.exec(value);
  if (scheme) {
    const rest = scheme[3];
    const redacted = keep(rest) ? rest : redactionMarker(kind);
    return `${name}${sep}${scheme[1]}${scheme[2]}${redacted}${trailing}`;
  }
  return `${name}${sep}${keep(value) ? value : redactionMarker(kind)}${trailing}`;
}

/** `user:pass` base64, as in a Basic header. */
function isBasicCredential(b64: string): boolean {
  const decoded = Buffer.from(b64, 'base64').toString('utf8');
  return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

function redactCookiePairs(run: string): string {
  return run.replace(/([^;=\s]+)=([^;]*)/g, (pair, name: string, value: string) =>
    secretKindOfName(name, 'cookie') && !keep(value) ? `${name}=${redactionMarker('cookie')}` : pair,
  );
}

/**
 * Unquoted value: stops at whitespace, separators, quotes, brackets and any
 * backslash. Dropping a backslash (`\n`, `\"` inside a JSON string) would
 * change what the text around it means to the next rule, so it is never consumed.
 */
const BARE_VALUE = `[^\\s,;&"'\`<>{}\\[\\]()\\\\]+`;
/** A flag's separate value: not another flag; may hold "," ";" "&" (quoted in the shell). */
const FLAG_VALUE = `(?!-)[^\\s"'\`\\\\]+`;
const QUOTED_VALUE = `\\\\"(?:(?!\\\\")[^\\r\\n])*\\\\"|"(?:[^"\\\\\\r\\n]|\\\\.)*"|'(?:[^'\\\\\\r\\n]|\\\\.)*'`;
// Leading dashes so "--password=x" is a key too.
const KEY = '-{0,2}[A-Za-z_][A-Za-z0-9_.\\-]{0,127}';
/** `${VAR}`: a reference to a secret, not one; kept whole so it is not cut at "{". */
const VAR_REF = '\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}';

/** The rules in order: whole blocks and vendor tokens first (precise kinds), then shapes, then secret-named keys. */
export const REDACTION_RULES: readonly RedactionRule[] = [
  {
    name: 'PEM private key block (an unterminated one up to the end of its base64)',
    pattern:
      /-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,10000}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\- \t\r\n]|\\[rn])*)/g,
    replace: () => redactionMarker('private_key'),
  },
  {
    name: 'JWT (header.payload[.signature])',
    pattern: /\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}(?:\.[A-Za-z0-9_-]*)?/g,
    replace: () => redactionMarker('jwt'),
  },
  {
    name: 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})\b/g,
    replace: () => redactionMarker('github_token'),
  },
  { name: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replace: () => redactionMarker('gitlab_token') },
  {
    name: 'Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xapp-)',
    pattern: /\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})/g,
    replace: () => redactionMarker('slack_token'),
  },
  {
    name: 'Slack webhook URL',
    pattern: /(https:\/\/hooks\.slack\.com\/services\/)[A-Za-z0-9/_-]+/g,
    replace: (_m, prefix: string) => `${prefix}${redactionMarker('slack_webhook')}`,
  },
  {
    name: 'AWS access key id',
    pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g,
    replace: () => redactionMarker('aws_access_key_id'),
  },
  { name: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{30,}/g, replace: () => redactionMarker('google_api_key') },
  {
    name: 'Stripe secret, restricted and webhook keys',
    pattern: /\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})\b/g,
    replace: () => redactionMarker('stripe_key'),
  },
  {
    // At least one digit: keeps long hyphenated slugs like "sk-learn-compatible-estimators".
    name: 'OpenAI / Anthropic style sk- key',
    pattern: /\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}/g,
    replace: () => redactionMarker('api_key'),
  },
  { name: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{30,}\b/g, replace: () => redactionMarker('npm_token') },
  {
    name: 'SendGrid key',
    pattern: /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/g,
    replace: () => redactionMarker('sendgrid_key'),
  },
  {
    name: 'Hugging Face token',
    pattern: /\bhf_[A-Za-z0-9]{30,}\b/g,
    replace: () => redactionMarker('huggingface_token'),
  },
  {
    name: 'URL with user:password@',
    pattern: /\b([a-z][a-z0-9+.-]{1,20}:\/\/)([^\s/?#@"'<>:]+:[^\s/?#@"'<>]*)@/gi,
    replace: (m, scheme: string, userinfo: string) =>
      isMarker(userinfo) ? m : `${scheme}${redactionMarker('credentials')}@`,
  },
  {
    name: 'credential headers (Cookie:, Set-Cookie:, Authorization:, X-Api-Key: ...), to the end of the line or string',
    pattern: new RegExp(`(?<![\\w-])(${HEADER_NAMES.join('|')})([ \\t]*:[ \\t]*)([^\\r\\n"'\\\\]+)`, 'gi'),
    replace: (_m, name: string, sep: string, value: string) => redactHeader(_m, name, sep, value),
  },
  {
    name: 'Bearer token outside a header',
    pattern: /\b(Bearer)(\s+)([A-Za-z0-9._~+/-]{16,}=*)/gi,
    // Needs a digit or punctuation: "Bearer authentication" is prose, not a token.
    replace: (m, scheme: string, space: string, token: string) =>
      /[\d._~+/=-]/.test(token) ? `${scheme}${space}${redactionMarker('bearer')}` : m,
  },
  {
    name: 'Basic credentials outside a header',
    pattern: /\b(Basic)(\s+)([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/g,
    replace: (m, scheme: string, space: string, b64: string) =>
      isBasicCredential(b64) ? `${scheme}${space}${redactionMarker('basic_auth')}` : m,
  },
  {
    name: 'localStorage / sessionStorage .setItem(key, value)',
    pattern:
      /\b((?:local|session)Storage\.setItem\(\s*(\\?["'`])(?:(?!\2)[^\r\n])*?\2\s*,\s*)(\\?["'`])((?:(?!\3)[^\r\n])*?)\3/g,
    replace: (m, head: string, _q1: string, q: string, value: string) =>
      keep(value) ? m : `${head}${q}${redactionMarker('storage')}${q}`,
  },
  {
    name: 'localStorage.x = value, localStorage["x"] = value',
    pattern:
      /\b((?:local|session)Storage(?:\.[A-Za-z_$][\w$]*|\[\s*\\?["'][^"'\]\r\n]*\\?["']\s*\])\s*=\s*)(\\?["'`])((?:(?!\2)[^\r\n])*?)\2/g,
    replace: (m, head: string, q: string, value: string) =>
      keep(value) ? m : `${head}${q}${redactionMarker('storage')}${q}`,
  },
  {
    name: 'document.cookie = "name=value; attributes"',
    pattern: /\b(document\.cookie\s*=\s*)(\\?["'`])([A-Za-z0-9_.\-$%!]{1,128})=([^;\r\n"'`\\]*)/g,
    replace: (m, head: string, q: string, name: string, value: string) =>
      keep(value) ? m : `${head}${q}${name}=${redactionMarker('cookie')}`,
  },
  {
    name: 'cookie JSON from CDP Network.getCookies or a storage state ("name": "sid", "value": "...")',
    pattern: /("name"\s*:\s*"(?:[^"\\\r\n]|\\.){0,256}"\s*,\s*"value"\s*:\s*")((?:[^"\\\r\n]|\\.)*)"/g,
    replace: (m, head: string, value: string) => (keep(value) ? m : `${head}${redactionMarker('cookie')}"`),
  },
  {
    name: 'cookie JSON inside a JSON string (\\"name\\":\\"sid\\",\\"value\\":\\"...\\")',
    pattern: /(\\"name\\"\s*:\s*\\"(?:(?!\\")[^\r\n]){0,256}\\"\s*,\s*\\"value\\"\s*:\s*\\")((?:(?!\\")[^\r\n])*)\\"/g,
    replace: (m, head: string, value: string) => (keep(value) ? m : `${head}${redactionMarker('cookie')}\\"`),
  },
  {
    name: 'URL query and fragment parameters with secret names (?token=, &access_token=, #id_token=, &sig=, &key=)',
    pattern: new RegExp(`([?&#;])([A-Za-z0-9_.\\-[\\]%]{1,64})=(${M}|[^&#;\\s"'<>\\\\)\`]+)`, 'g'),
    replace: (m, sep: string, name: string, value: string) => {
      const kind = secretKindOfName(decodeURIComponentSafe(name), 'query');
      return kind && !keep(value) ? `${sep}${name}=${redactionMarker(kind)}` : m;
    },
  },
  {
    name: 'cookie strings (document.cookie output): session-ish values of "a=b; c=d"',
    // Starts only where a cookie string can start (line start, space, quote, "(", ",", ":"), so
    // "a=a=a=..." with no ";" is one failed attempt, not one per "=".
    pattern:
      /(?<=^|[\s"'`(,:])[A-Za-z0-9_.\-$%!]{1,128}=[^;&\s"'\\]*(?:;[ \t]*[A-Za-z0-9_.\-$%!]{1,128}=[^;&\s"'\\]*)+/gm,
    replace: (run) => redactCookiePairs(run),
  },
  {
    name: 'whole-line KEY=value / key: value (env files, YAML, storage dumps) with secret names',
    pattern: new RegExp(
      `^([ \\t]*(?:export[ \\t]+|-[ \\t]+)?)(${KEY})([ \\t]*[:=][ \\t]*)(?!["'{\\[\\s])([^\\r\\n]+?)([ \\t]*)$`,
      'gm',
    ),
    replace: (m, indent: string, name: string, sep: string, value: string, trailing: string) => {
      if (ownedByHeaderRule(name, sep, value)) return m;
      const kind = secretKindOfName(name);
      return kind && !keep(value) ? `${indent}${name}${sep}${redactionMarker(kind)}${trailing}` : m;
    },
  },
  {
    name: 'inline key=value, key: value, "key": "value" (also inside JSON strings) with secret names',
    pattern: new RegExp(
      `(?<![A-Za-z0-9_.\\-])(?<!\\[redacted:)(\\\\?["']?)(${KEY})\\1(\\]?[ \\t]*(?::|=>|=(?!=))[ \\t]*)(${M}|${VAR_REF}|${QUOTED_VALUE}|${BARE_VALUE})`,
      'g',
    ),
    rescanGroup: 4,
    replace: (m, quote: string, name: string, sep: string, value: string) => {
      if (quote === '' && ownedByHeaderRule(name, sep, value)) return m;
      const kind = secretKindOfName(name);
      return kind ? `${quote}${name}${quote}${sep}${replaceQuoted(value, kind)}` : m;
    },
  },
  {
    name: 'CLI flags with secret names and a separate value (--password hunter2, --token "...")',
    pattern: new RegExp(
      `(?<![\\w-])(--?[A-Za-z][A-Za-z0-9_-]{0,63})([ \\t]+)(${M}|"(?:[^"\\\\\\r\\n]|\\\\.)*"|'(?:[^'\\\\\\r\\n]|\\\\.)*'|${FLAG_VALUE})`,
      'g',
    ),
    rescanGroup: 3,
    replace: (m, flag: string, space: string, value: string) => {
      const kind = secretKindOfName(flag.replace(/^-+/, ''), 'flag');
      return kind ? `${flag}${space}${replaceQuoted(value, kind)}` : m;
    },
  },
];

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
