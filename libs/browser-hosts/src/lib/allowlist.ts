import { BrowserHostError } from './browser-host.error';

/**
 * A parsed `allow_domains` list: exact hosts (`example.com` allows only that host)
 * and wildcards (`*.example.com` allows every subdomain, not `example.com` itself:
 * list both to allow both, as with agent-browser's `--allowed-domains`).
 */
export interface AllowDomains {
  exact: ReadonlySet<string>;
  /** Suffixes with their leading dot: `.example.com`. */
  suffixes: readonly string[];
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lower case, no trailing dot, IPv6 without brackets. */
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * Checks and parses `allow_domains`.
 *
 * @throws BrowserHostError `allow_domain_invalid` for an entry that is not a host name,
 *   an IP address, or `*.` + a host name (no scheme, port, path or inner wildcard).
 */
export function parseAllowDomains(entries: readonly string[]): AllowDomains {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const raw of entries) {
    const wildcard = raw.trim().startsWith('*.');
    const host = normalizeHost(wildcard ? raw.trim().slice(2) : raw);
    if (!isHostName(host) && (wildcard || !isIpLiteral(host))) {
      throw new BrowserHostError(
        'allow_domain_invalid',
        `allow_domains entry "${raw}" must be a host name like example.com or a wildcard like *.example.com.`,
      );
    }
    if (wildcard) suffixes.push(`.${host}`);
    else exact.add(host);
  }
  return { exact, suffixes };
}

/** Is `host` allowed by the list? */
export function isHostAllowed(host: string, allow: AllowDomains): boolean {
  const h = normalizeHost(host);
  return allow.exact.has(h) || allow.suffixes.some((suffix) => h.endsWith(suffix) && h.length > suffix.length);
}

/** Schemes that never leave the browser: they pass unchecked. */
const LOCAL_SCHEMES = new Set(['data:', 'blob:', 'about:']);
const NETWORK_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);

export type UrlVerdict =
  | { allowed: true; checked: false }
  | { allowed: boolean; checked: true; host: string };

/**
 * The decision for one request URL: http(s)/ws(s) are checked by host; `data:`,
 * `blob:` and `about:` pass; any other scheme (`file:`, `ftp:`, `chrome:`…) is refused,
 * reported under the scheme, because a throw-away browser limited to some sites has
 * no business reading local files either.
 */
export function judgeUrl(url: string, allow: AllowDomains): UrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { allowed: false, checked: true, host: '(unparsable url)' };
  }
  if (LOCAL_SCHEMES.has(parsed.protocol)) return { allowed: true, checked: false };
  if (!NETWORK_SCHEMES.has(parsed.protocol)) return { allowed: false, checked: true, host: parsed.protocol };
  const host = normalizeHost(parsed.hostname);
  return { allowed: isHostAllowed(host, allow), checked: true, host };
}

/** A URL fit for a report: no credentials, query or fragment (they can carry tokens). */
export function reportableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!NETWORK_SCHEMES.has(parsed.protocol)) return parsed.protocol;
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(unparsable url)';
  }
}

function isHostName(host: string): boolean {
  const labels = host.split('.');
  return host.length <= 253 && labels.length >= 1 && labels.every((label) => LABEL.test(label)) && !/^\d+$/.test(labels.at(-1) ?? '');
}

function isIpLiteral(host: string): boolean {
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(host)) {
    return host.split('.').every((part) => Number(part) <= 255);
  }
  return host.includes(':') && /^[0-9a-f:.]+$/.test(host);
}
