import { basename } from 'node:path';
import { domainToASCII } from 'node:url';
import { NAVIGATION_HOST } from '@stageflow/contracts';
import { shellCommands } from './shell-words';

/** agent-browser's navigation commands (`open` has the aliases `goto` and `navigate`). */
const OPEN_COMMANDS = new Set(['open', 'goto', 'navigate']);

/**
 * agent-browser (0.41) flags that take a separate value, so the value is not
 * mistaken for the command (`agent-browser --session work open https://...`).
 * Global flags may stand before or after the command; `--label` belongs to
 * `tab new`. The `agent-browser` wrapper of profile stages is generated from
 * this list, so the runner and this parser agree.
 */
// prettier-ignore
export const AGENT_BROWSER_VALUE_FLAGS: readonly string[] = [
  '--session', '--namespace', '--session-name', '--profile', '--state', '--headers',
  '--executable-path', '--extension', '--init-script', '--enable', '--args', '--user-agent',
  '--proxy', '--proxy-bypass', '--ca-cert', '-p', '--provider', '--device', '--screenshot-dir',
  '--screenshot-quality', '--screenshot-format', '--input-mode', '--cdp', '--cdp-headers',
  '--color-scheme', '--download-path', '--max-output', '--allowed-domains', '--action-policy',
  '--confirm-actions', '--idle-timeout', '--engine', '--model', '--config', '--restore-save',
  '--restore-check-url', '--restore-check-text', '--restore-check-fn', '--label',
];

/**
 * Flags whose value is optional: agent-browser takes the next word as the
 * value unless it is a command (`--restore open <url>` opens; `--restore work
 * open <url>` restores `work`). Only the navigation commands matter here.
 */
export const AGENT_BROWSER_OPTIONAL_VALUE_FLAGS: readonly string[] = ['--restore'];

/** The words that end an optional value: the commands {@link agentBrowserNavigation} looks for. */
export const AGENT_BROWSER_NAVIGATION_WORDS: readonly string[] = ['open', 'goto', 'navigate', 'tab'];

const VALUE_FLAGS = new Set(AGENT_BROWSER_VALUE_FLAGS);
const OPTIONAL_VALUE_FLAGS = new Set(AGENT_BROWSER_OPTIONAL_VALUE_FLAGS);
const NAVIGATION_WORDS = new Set(AGENT_BROWSER_NAVIGATION_WORDS);

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function isAgentBrowser(word: string): boolean {
  return /^agent-browser(?:\.cmd|\.exe)?$/i.test(basename(word.replace(/\\/g, '/')));
}

/**
 * The positional words of one agent-browser invocation: flags and their
 * values left out. A boolean flag takes an optional `true`/`false`
 * (`--headed false open ...`), as agent-browser's own parser does.
 */
function positionals(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i];
    if (w.startsWith('-') && w.length > 1) {
      if (w.includes('=')) continue;
      const next = args[i + 1];
      if (VALUE_FLAGS.has(w)) i++;
      else if (OPTIONAL_VALUE_FLAGS.has(w)) {
        if (next !== undefined && !next.startsWith('-') && !NAVIGATION_WORDS.has(next)) i++;
      } else if (next === 'true' || next === 'false') i++;
      continue;
    }
    out.push(w);
  }
  return out;
}

/** agent-browser adds `https://` to a target without a scheme (`example.com`, `localhost:3000/x`); so do we. */
function toUrl(target: string): string {
  return SCHEME.test(target) && !/^[^:/]+:\d/.test(target) ? target : `https://${target}`;
}

/**
 * The URL one agent-browser invocation explicitly navigates to, given its
 * arguments (without the program name): the target of `open|goto|navigate
 * <url>` or `tab new <url>`, with `https://` added when it has no scheme, as
 * agent-browser does. `undefined` for every other command.
 */
export function agentBrowserNavigation(args: readonly string[]): string | undefined {
  const [command, ...rest] = positionals(args);
  let target: string | undefined;
  if (command !== undefined && OPEN_COMMANDS.has(command)) target = rest[0];
  else if (command === 'tab' && rest[0] === 'new') target = rest[1];
  return target === undefined || target === '' ? undefined : toUrl(target);
}

function navigationsOf(words: string[]): string[] {
  const urls: string[] = [];
  words.forEach((word, i) => {
    if (!isAgentBrowser(word)) return;
    const url = agentBrowserNavigation(words.slice(i + 1));
    // A shell variable or substitution: the real target is unknown here.
    if (url !== undefined && !/[$`]/.test(url)) urls.push(url);
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

/**
 * The host an http(s) URL navigates to, lowercased and in ASCII (punycode), as
 * audit records hold it; `undefined` for other schemes (`about:`, `data:`,
 * `file:`), for what does not parse as a URL, and for a host no DNS name or IP
 * literal looks like (`"x".test` parses, but no browser can open it).
 */
export function navigationHost(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const host = normalizeHost(parsed.hostname);
  return NAVIGATION_HOST.test(host) ? host : undefined;
}

/**
 * Whether `allowDomains` allows `host` (as {@link navigationHost} returns it),
 * with agent-browser's matching: `example.com` allows that host only,
 * `*.example.com` allows it and every subdomain.
 */
export function isHostAllowed(host: string, allowDomains: readonly string[]): boolean {
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
 * of first appearance: what `navigation_outside_allowlist` records. Matching
 * as in {@link isHostAllowed}. Only http(s) URLs have a host to check; an
 * empty allowlist means there is nothing to audit.
 */
export function hostsOutsideAllowlist(urls: readonly string[], allowDomains: readonly string[]): string[] {
  if (allowDomains.length === 0) return [];
  const outside = new Set<string>();
  for (const url of urls) {
    const host = navigationHost(url);
    if (host !== undefined && !isHostAllowed(host, allowDomains)) outside.add(host);
  }
  return [...outside];
}
