import { navigationHost } from '@stageflow/audit';
import { ACTIVITY_REPORT_MAX_HOSTS, type StageActivityReport } from '@stageflow/contracts';
import { ACTIVITY_HEADER } from './agent-browser-wrapper';

/** What the runner read of an attempt's activity file. */
export type ActivityFile =
  | { state: 'read'; text: string; truncated: boolean }
  /** Missing (the stage deleted it or its folder), or not readable. */
  | { state: 'unreadable' };

/** What the activity tells, with how many agent-browser calls it saw (for the runner's log line). */
export interface ActivityReading extends StageActivityReport {
  calls: number;
}

const COMMANDS = new Set(['open', 'goto', 'navigate', 'tab-new', 'other']);
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]{0,63}$/;
/** What the wrapper writes: at most 1024 bytes of a host, bytes outside its safe set percent-encoded (three characters each). */
const RAW_HOST = /^(?:[A-Za-z0-9._~:[\]-]|%[0-9A-F]{2}){1,1024}$/;

interface ActivityLine {
  cmd: string;
  scheme?: string;
  host?: string;
}

/** One wrapper line, or undefined when it is not one (the stage wrote to the file, or it is torn). */
function parseLine(line: string): ActivityLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { cmd, scheme, host, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof cmd !== 'string' || !COMMANDS.has(cmd)) return undefined;
  if (scheme !== undefined && (typeof scheme !== 'string' || !SCHEME.test(scheme))) return undefined;
  if (host !== undefined && (typeof host !== 'string' || !RAW_HOST.test(host) || scheme === undefined)) return undefined;
  return { cmd, ...(scheme === undefined ? {} : { scheme }), ...(host === undefined ? {} : { host }) };
}

/** The audited host of a navigation line, as the audit log stores it; undefined when it has none or it cannot be opened. */
function hostOf(line: ActivityLine): string | undefined {
  if (line.cmd === 'other' || line.host === undefined || line.scheme === undefined) return undefined;
  const scheme = line.scheme.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  // Undo the wrapper's encoding, then let the WHATWG parser read the host as Chrome does.
  const raw = Buffer.from(line.host.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return navigationHost(`${scheme}://${raw.toString('utf8')}/`);
}

/**
 * Reads an attempt's activity file into the report browser-host audits: each
 * host the stage explicitly opened, once, in order. The report says
 * `activity_unreadable` when the file is missing, lacks the runner's header
 * (deleted or truncated during the stage), or holds a line the wrapper did not
 * write; the hosts of the lines that are sound are still sent. It says
 * `activity_too_large` when the file or its hosts passed the limits.
 */
export function readActivity(file: ActivityFile, maxHosts = ACTIVITY_REPORT_MAX_HOSTS): ActivityReading {
  if (file.state === 'unreadable') return { navigationHosts: [], calls: 0, unverified: 'activity_unreadable' };
  const lines = file.text.split('\n');
  // A file ends with a newline; what follows the last one is torn (or was cut at the size limit).
  const torn = lines.pop() !== '';
  const headed = lines[0] === ACTIVITY_HEADER;
  let corrupt = !headed || (torn && !file.truncated);
  const hosts = new Set<string>();
  let calls = 0;
  for (const text of headed ? lines.slice(1) : lines) {
    const line = parseLine(text);
    if (!line) {
      corrupt = true;
      continue;
    }
    calls++;
    const host = hostOf(line);
    if (host !== undefined) hosts.add(host);
  }
  const all = [...hosts];
  const unverified = corrupt
    ? 'activity_unreadable'
    : file.truncated || all.length > maxHosts
      ? 'activity_too_large'
      : undefined;
  return { navigationHosts: all.slice(0, maxHosts), calls, ...(unverified ? { unverified } : {}) };
}
