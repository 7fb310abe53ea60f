import { basename } from 'node:path';
import { domainToASCII } from 'node:url';
import { shellCommands } from './shell-words';

/** agent-browser's navigation commands (`open` has the aliases `goto` and `navigate`). */
const OPEN_COMMANDS = new Set(['open', 'goto', 'navigate']);

/**
 * agent-browser global flags that take a separate value, so the value is not
 * mistaken for the command (`agent-browser --session work open https://...`).
 */
// prettier-ignore
const FLAGS_WITH_VALUE = new Set([
  '--session', '--session-name', '--profile', '--state', '--cdp', '--headers',
  '--executable-path', '--extension', '--args', '--user-agent', '--proxy', '--proxy-bypass',
  '--provider', '-p', '--device', '--allowed-domains', '--action-policy', '--confirm-actions',
  '--max-output', '--color-scheme', '--download-path', '--config', '--engine',
]);

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function isAgentBrowser(word: string): boolean {
  return /^agent-browser(?:\.cmd|\.exe)?$/i.test(basename(word.replace(/\\/g, '/')));
}

/** Words after `from` that are not flags or flag values. */
function positionals(words: string[], from: number): string[] {
  const out: string[] = [];
  for (let i = from; i < words.length; i++) {
    const w = words[i];
    if (w.startsWith('-') && w.length > 1) {
      if (!w.includes('=') && FLAGS_WITH_VALUE.has(w)) i++;
      continue;
    }
    out.push(w);
  }
  return out;
}

/** agent-browser adds `https://` to a target without a scheme; so do we. */
function toUrl(target: string): string | undefined {
  // A shell variable or substitution: the real target is unknown here.
  if (target === '' || /[$`]/.test(target)) return undefined;
  return SCHEME.test(target) && !/^[^:/]+:\d/.test(target) ? target : `https://${target}`;
}

function navigationsOf(words: string[]): string[] {
  const urls: string[] = [];
  words.forEach((word, i) => {
    if (!isAgentBrowser(word)) return;
    const [command, ...rest] = positionals(words, i + 1);
    let target: string | undefined;
    if (command !== undefined && OPEN_COMMANDS.has(command)) target = rest[0];
    else if (command === 'tab' && rest[0] === 'new') target = rest[1];
    const url = target === undefined ? undefined : toUrl(target);
    if (url !== undefined) urls.push(url);
  });
  // `bash -c 'agent-browser open ...'`: the command is one quoted word.
  for (const word of words) {
    if (/\s/.test(word) && /agent-browser/i.test(word)) urls.push(...extractNavigations(word));
  }
  return urls;
}

/**
 * The URLs a shell command line explicitly navigates to with
 * `agent-browser open|goto|navigate <url>` or `agent-browser tab new <url>`,
 * in order. Targets without a scheme get `https://` (as agent-browser does);
 * targets built from shell variables are not known and are left out.
 * Redirects, clicks and in-page navigation are never seen: this feeds the
 * soft allowlist audit, not a security boundary.
 */
export function extractNavigations(commandLine: string): string[] {
  return shellCommands(commandLine).flatMap(navigationsOf);
}

function normalizeHost(host: string): string {
  const bare = host.trim().toLowerCase().replace(/\.+$/, '');
  return domainToASCII(bare) || bare;
}

function isAllowed(host: string, allowDomains: readonly string[]): boolean {
  return allowDomains.some((raw) => {
    const pattern = raw.trim().toLowerCase();
    if (pattern.startsWith('*.')) {
      const base = normalizeHost(pattern.slice(2));
      return host === base || host.endsWith(`.${base}`);
    }
    return host === normalizeHost(pattern);
  });
}

/**
 * The hosts of `urls` that `allowDomains` does not allow, each once, in order
 * of first appearance: what `navigation_outside_allowlist` records. Same
 * matching as agent-browser's allowlist: `example.com` allows that host only,
 * `*.example.com` allows it and every subdomain. Only http(s) URLs have a host
 * to check; an empty allowlist means there is nothing to audit.
 */
export function hostsOutsideAllowlist(urls: readonly string[], allowDomains: readonly string[]): string[] {
  if (allowDomains.length === 0) return [];
  const outside = new Set<string>();
  for (const raw of urls) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const host = normalizeHost(url.hostname);
    if (host !== '' && !isAllowed(host, allowDomains)) outside.add(host);
  }
  return [...outside];
}
