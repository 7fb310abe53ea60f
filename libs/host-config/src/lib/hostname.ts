import { domainToASCII } from 'node:url';

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * The hostname of a URL, a bare host (`example.com`, `example.com:8080/x`) or
 * an allow_domains pattern (`*.example.com`): lowercased, punycode, without
 * port or trailing dot. `undefined` when there is no network host
 * (`about:blank`, `data:`) or the input does not parse.
 */
export function hostOf(urlOrHost: string): string | undefined {
  const input = urlOrHost.trim();
  if (input === '') return undefined;
  let url: URL;
  try {
    // "localhost:3000" parses as scheme "localhost:"; only "scheme://" means a URL.
    url = new URL(SCHEME.test(input) && input.includes('://') ? input : `http://${input}`);
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  return host === '' ? undefined : host;
}

/** True when `host` is `site` or one of its subdomains (`notexample.com` is not under `example.com`). */
export function isSameOrSubdomain(host: string, site: string): boolean {
  return host === site || host.endsWith(`.${site}`);
}

/**
 * Normalizes one `browser.blocked_sites` entry, or says what is wrong with it
 * and how to write it instead.
 */
export function parseBlockedSite(raw: string): { site: string } | { problem: string } {
  const s = raw.trim();
  if (s === '') return { problem: 'is empty; write a hostname such as example.com' };
  if (SCHEME.test(s) && s.includes('://')) {
    return { problem: `is a URL ("${s}"); write the hostname only, e.g. ${hostOf(s) ?? 'example.com'}` };
  }
  if (s.startsWith('*.')) {
    return { problem: `has a wildcard ("${s}"); write ${s.slice(2)}: a blocked site already blocks every subdomain` };
  }
  if (s.includes('/')) return { problem: `has a path ("${s}"); write the hostname only, e.g. ${s.split('/')[0]}` };
  if (s.startsWith('[') || (s.match(/:/g)?.length ?? 0) > 1) {
    return { problem: `("${s}") looks like an IPv6 address; only hostnames and IPv4 addresses can be blocked` };
  }
  if (s.includes(':')) return { problem: `has a port ("${s}"); write ${s.split(':')[0]}: every port is blocked` };
  const ascii = domainToASCII(s.replace(/\.$/, ''));
  if (ascii === '' || ascii.length > 253 || !ascii.split('.').every((label) => LABEL.test(label))) {
    return { problem: `("${s}") is not a hostname; use letters, digits, "-" and "." as in example.com` };
  }
  return { site: ascii };
}
