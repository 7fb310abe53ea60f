import { isAbsolute } from 'node:path';
import { Document, isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, YAMLMap } from 'yaml';
import { didYouMean } from './did-you-mean';
import { HostConfigError, HostConfigProblem } from './host-config.errors';
import {
  BROWSER_HOST_KINDS,
  BrowserHostKind,
  ContainerHostConfig,
  defaultHostConfig,
  HOST_CONFIG_LIMITS,
  HostConfig,
} from './host-config.model';
import { parseBlockedSite } from './hostname';

const ROOT_KEYS = ['browser'] as const;
const BROWSER_KEYS = [
  'blocked_sites',
  'launch_args',
  'executable_path',
  'dialog_timeout_seconds',
  'host',
  'container',
  'owner_hosts',
] as const;
const CONTAINER_KEYS = ['image', 'shm_size', 'memory', 'pids_limit'] as const;

/** Every key path of the format, so a key in the wrong place can be pointed to its home. */
const KNOWN_PATHS = [
  'browser',
  ...BROWSER_KEYS.map((k) => `browser.${k}`),
  ...CONTAINER_KEYS.map((k) => `browser.container.${k}`),
];

/** Keys people copy from a stage's `browser:` block; they belong in the pipeline YAML. */
const STAGE_ONLY_KEYS = new Set(['profile', 'headed', 'allow_domains', 'login_url', 'check', 'verify']);

/**
 * Switches the Host computes per launch. Setting them here would point every
 * browser at one profile folder or one debugging port and break leases.
 */
const HOST_MANAGED_SWITCHES = [
  '--user-data-dir',
  '--remote-debugging-port',
  '--remote-debugging-address',
  '--remote-debugging-pipe',
];

const SIZE = /^(\d+)([bkmg]?)$/i;
const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

// Docker's reference grammar (distribution/reference), without the upper-case
// repository names it rejects anyway. Also keeps "-..." from reaching the docker CLI as a flag.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?)`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const IMAGE_REFERENCE = new RegExp(
  `^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`,
);

type Path = readonly (string | number)[];

function formatPath(path: Path): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** `yaml`'s message in our words, without its " at line 3, column 1:\n<excerpt>" tail (we report the position). */
function yamlMessage(e: { code: string; message: string; name: string }): string {
  if (e.code === 'MULTIPLE_DOCS') return 'The file holds more than one YAML document (a "---" line); keep one';
  if (e.code === 'TAG_RESOLVE_FAILED') {
    return `YAML tags such as ${/tag: (\S+)/.exec(e.message)?.[1] ?? '!tag'} are not supported; write the value itself`;
  }
  const text = e.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
  return `YAML ${e.name === 'YAMLWarning' ? 'problem' : 'syntax error'}: ${text}; check the indentation, quotes and brackets here`;
}

interface Entry {
  key: string;
  keyNode: unknown;
  value: unknown;
}

/** Walks the YAML syntax tree against the schema, collecting every problem with its position. */
class HostConfigReader {
  readonly problems: HostConfigProblem[] = [];

  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  report(path: Path, node: unknown, message: string): void {
    const { line, col } = this.lines.linePos(this.offset(node));
    const where = formatPath(path);
    this.problems.push({ path: where, line, column: col, message: where ? `${where} ${message}` : message });
  }

  private offset(node: unknown): number {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range ? range[0] : 0;
  }

  /** Follows `*alias` to its anchored node; the parser already capped how many there may be. */
  resolve(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.doc) : node;
  }

  /** A mapping's entries, reporting unknown, duplicate and non-string keys. `allowed` undefined = any key. */
  entries(path: Path, node: YAMLMap, allowed?: readonly string[]): Entry[] {
    const seen = new Set<string>();
    const out: Entry[] = [];
    for (const pair of node.items) {
      const keyNode = this.resolve(pair.key);
      if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
        this.report(
          path,
          pair.key ?? node,
          `has a key that is not a plain name (${quote(isScalar(keyNode) ? keyNode.value : 'a collection')}); keys are words such as host`,
        );
        continue;
      }
      const key = keyNode.value;
      if (seen.has(key)) {
        this.report([...path, key], keyNode, 'is set twice; keep one of them');
        continue;
      }
      seen.add(key);
      if (allowed && !allowed.includes(key)) {
        this.report([...path, key], keyNode, this.unknownKeyMessage(path, key, allowed));
        continue;
      }
      out.push({ key, keyNode, value: pair.value });
    }
    return out;
  }

  private unknownKeyMessage(path: Path, key: string, allowed: readonly string[]): string {
    const parent = formatPath(path);
    const here = parent ? `under ${parent}` : 'at the top level';
    const lastOf = (p: string): string => p.slice(p.lastIndexOf('.') + 1);
    const parentOf = (p: string): string => p.slice(0, Math.max(0, p.lastIndexOf('.')));
    const others = KNOWN_PATHS.filter((p) => parentOf(p) !== parent);
    const match = didYouMean(key, others.map(lastOf));
    const elsewhere = match && others.find((p) => lastOf(p) === match);
    const close = didYouMean(key, allowed);
    let hint = '';
    if (close) {
      hint = ` Did you mean ${parent ? `${parent}.` : ''}${close}?`;
    } else if (STAGE_ONLY_KEYS.has(key)) {
      hint =
        " It is a stage setting: set it in the stage's browser block of the pipeline YAML, not in the Host config.";
    } else if (elsewhere) {
      hint = ` Did you mean ${elsewhere}?`;
    }
    return `is not a known key ${here}. Allowed: ${allowed.join(', ')}.${hint}`;
  }

  /** The mapping at `node`, or a report and `undefined`. `null` (a key with no value) is reported too. */
  map(path: Path, node: unknown, keyNode: unknown, example: string): YAMLMap | undefined {
    const value = this.resolve(node);
    if (isMap(value)) return value;
    this.report(path, value ?? keyNode, `must be a mapping of settings${this.emptyHint(value)}, e.g.\n    ${example}`);
    return undefined;
  }

  /** A list's items, or a report and `undefined`. */
  seq(path: Path, node: unknown, keyNode: unknown, example: string): unknown[] | undefined {
    const value = this.resolve(node);
    if (isSeq(value)) return value.items;
    const got = isScalar(value) && value.value !== null ? ` (got ${quote(value.value)})` : '';
    this.report(path, value ?? keyNode, `must be a list${got}${this.emptyHint(value)}, e.g. ${example}`);
    return undefined;
  }

  /** A scalar's value (`undefined` for a collection) and how to name what was found in a message. */
  scalar(node: unknown): { value: unknown; node: unknown; got: string } {
    const value = this.resolve(node);
    if (isMap(value)) return { value: undefined, node: value, got: 'a mapping' };
    if (isSeq(value)) return { value: undefined, node: value, got: 'a list' };
    const v = isScalar(value) ? value.value : value;
    return { value: v, node: value, got: v === null || v === undefined ? 'no value' : quote(v) };
  }

  private emptyHint(value: unknown): string {
    return value === null || (isScalar(value) && value.value === null)
      ? '; it has no value (remove the key to use the default)'
      : '';
  }
}

function readBrowser(r: HostConfigReader, node: unknown, keyNode: unknown, config: HostConfig): void {
  const path = ['browser'];
  const map = r.map(path, node, keyNode, 'browser:\n      blocked_sites: [example.com]');
  if (!map) return;
  const b = config.browser;
  for (const { key, keyNode: k, value } of r.entries(path, map, BROWSER_KEYS)) {
    const at = [...path, key];
    switch (key) {
      case 'blocked_sites': {
        const items = r.seq(at, value, k, '[example.com, accounts.example.org]');
        if (items) b.blockedSites = readBlockedSites(r, at, items);
        break;
      }
      case 'launch_args': {
        const items = r.seq(at, value, k, '[--no-sandbox, --use-gl=angle]');
        if (items) b.launchArgs = readLaunchArgs(r, at, items);
        break;
      }
      case 'executable_path': {
        const s = r.scalar(value);
        if (typeof s.value !== 'string' || s.value.trim() === '') {
          r.report(at, s.node ?? k, 'must be the absolute path of a Chrome or Chromium binary, e.g. /usr/bin/chromium');
        } else if (/[\0\r\n]/.test(s.value)) {
          r.report(at, s.node, 'must be one line with no control characters');
        } else if (!isAbsolute(s.value)) {
          r.report(
            at,
            s.node,
            `must be an absolute path (got ${quote(s.value)}), e.g. /usr/bin/chromium; the Host does not search PATH`,
          );
        } else {
          b.executablePath = s.value;
        }
        break;
      }
      case 'dialog_timeout_seconds': {
        const { min, max } = HOST_CONFIG_LIMITS.dialogTimeoutSeconds;
        const s = r.scalar(value);
        if (!Number.isInteger(s.value) || (s.value as number) < min) {
          r.report(at, s.node ?? k, `must be a positive whole number of seconds (got ${s.got}), e.g. 60`);
        } else if ((s.value as number) > max) {
          r.report(
            at,
            s.node,
            `is ${s.value as number}, above the maximum of ${max}: an unanswered dialog wedges agent-browser's screenshot and get url after about 150 seconds. Use a value well under that, e.g. 60`,
          );
        } else {
          b.dialogTimeoutSeconds = s.value as number;
        }
        break;
      }
      case 'host': {
        const kind = readHostKind(r, at, value, k);
        if (kind) b.host = kind;
        break;
      }
      case 'container':
        readContainer(r, at, value, k, b.container);
        break;
      case 'owner_hosts':
        b.ownerHosts = readOwnerHosts(r, at, value, k);
        break;
    }
  }
}

function readBlockedSites(r: HostConfigReader, path: Path, items: unknown[]): string[] {
  const sites = new Set<string>();
  if (items.length > HOST_CONFIG_LIMITS.maxBlockedSites) {
    r.report(
      path,
      items[HOST_CONFIG_LIMITS.maxBlockedSites],
      `has ${items.length} entries; the limit is ${HOST_CONFIG_LIMITS.maxBlockedSites}`,
    );
    return [];
  }
  items.forEach((item, i) => {
    const s = r.scalar(item);
    if (typeof s.value !== 'string') {
      r.report([...path, i], s.node ?? item, `must be a hostname such as example.com (got ${s.got})`);
      return;
    }
    const parsed = parseBlockedSite(s.value);
    if ('problem' in parsed) r.report([...path, i], s.node, parsed.problem);
    else sites.add(parsed.site);
  });
  return [...sites];
}

function readLaunchArgs(r: HostConfigReader, path: Path, items: unknown[]): string[] {
  const { maxLaunchArgs, maxLaunchArgLength } = HOST_CONFIG_LIMITS;
  if (items.length > maxLaunchArgs) {
    r.report(path, items[maxLaunchArgs], `has ${items.length} entries; the limit is ${maxLaunchArgs}`);
    return [];
  }
  const args: string[] = [];
  items.forEach((item, i) => {
    const at = [...path, i];
    const s = r.scalar(item);
    const arg = s.value;
    if (typeof arg !== 'string') {
      r.report(at, s.node ?? item, `must be a Chrome flag as a string, e.g. --no-sandbox (got ${s.got})`);
    } else if (arg === '') {
      r.report(at, s.node, 'is empty; write a Chrome flag such as --no-sandbox, or remove the item');
    } else if (/[\r\n]/.test(arg)) {
      r.report(
        at,
        s.node,
        'contains a newline; agent-browser splits flags on newlines, so put each flag in its own item',
      );
    } else if (arg.includes(',')) {
      r.report(
        at,
        s.node,
        `contains a comma (${quote(arg)}); agent-browser splits flags on commas, so a value with a comma cannot be passed`,
      );
    } else if (/[\0\t]/.test(arg)) {
      r.report(at, s.node, `contains a control character (${quote(arg)}); remove it`);
    } else if (!arg.startsWith('-')) {
      r.report(at, s.node, `must start with "-" (got ${quote(arg)}), e.g. --${arg.replace(/^-*/, '')}`);
    } else if (arg.length > maxLaunchArgLength) {
      r.report(at, s.node, `is longer than ${maxLaunchArgLength} characters`);
    } else if (HOST_MANAGED_SWITCHES.some((sw) => arg === sw || arg.startsWith(`${sw}=`))) {
      r.report(
        at,
        s.node,
        `sets ${arg.split('=')[0]}, which the Host sets itself for every launch (profile folder and debugging port); remove it`,
      );
    } else {
      args.push(arg);
    }
  });
  return args;
}

function readHostKind(r: HostConfigReader, path: Path, node: unknown, keyNode: unknown): BrowserHostKind | undefined {
  const s = r.scalar(node);
  if (typeof s.value === 'string' && (BROWSER_HOST_KINDS as readonly string[]).includes(s.value))
    return s.value as BrowserHostKind;
  const close = typeof s.value === 'string' ? didYouMean(s.value, BROWSER_HOST_KINDS) : undefined;
  r.report(
    path,
    s.node ?? keyNode,
    `must be local or container (got ${s.got}).${close ? ` Did you mean ${close}?` : ''}`,
  );
  return undefined;
}

function readContainer(
  r: HostConfigReader,
  path: Path,
  node: unknown,
  keyNode: unknown,
  out: ContainerHostConfig,
): void {
  const map = r.map(path, node, keyNode, 'container:\n      image: stageflow-browser-sandbox:local\n      memory: 1g');
  if (!map) return;
  for (const { key, keyNode: k, value } of r.entries(path, map, CONTAINER_KEYS)) {
    const at = [...path, key];
    const s = r.scalar(value);
    switch (key) {
      case 'image':
        if (typeof s.value !== 'string' || !IMAGE_REFERENCE.test(s.value) || s.value.length > 255) {
          r.report(
            at,
            s.node ?? k,
            `must be an image reference such as stageflow-browser-sandbox:local or registry.example.com/team/browser:1.2 (got ${s.got})`,
          );
        } else {
          out.image = s.value;
        }
        break;
      case 'shm_size':
      case 'memory': {
        const bytes = parseSize(s.value);
        if (bytes === undefined || bytes <= 0) {
          r.report(
            at,
            s.node ?? k,
            `must be a size: a whole number with an optional unit b, k, m or g, e.g. 1g or 512m (got ${s.got})`,
          );
        } else if (key === 'memory' && bytes < HOST_CONFIG_LIMITS.minContainerMemoryBytes) {
          r.report(at, s.node, `is ${quote(s.value)}, below Docker's minimum of 6m; use at least 512m for Chromium`);
        } else if (key === 'memory') {
          out.memoryBytes = bytes;
        } else {
          out.shmSizeBytes = bytes;
        }
        break;
      }
      case 'pids_limit':
        if (!Number.isSafeInteger(s.value) || (s.value as number) < 1) {
          r.report(at, s.node ?? k, `must be a positive whole number (got ${s.got}), e.g. 512`);
        } else {
          out.pidsLimit = s.value as number;
        }
        break;
    }
  }
}

/** `1g`, `512m`, `1048576` → bytes; `undefined` for anything else. */
function parseSize(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const m = SIZE.exec(text.trim());
  if (!m) return undefined;
  const bytes = Number(m[1]) * SIZE_UNITS[m[2].toLowerCase()];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

function readOwnerHosts(
  r: HostConfigReader,
  path: Path,
  node: unknown,
  keyNode: unknown,
): Record<string, BrowserHostKind> {
  const out = Object.create(null) as Record<string, BrowserHostKind>;
  const map = r.map(path, node, keyNode, 'owner_hosts:\n      local: container');
  if (!map) return out;
  for (const { key, keyNode: k, value } of r.entries(path, map)) {
    if (!HOST_CONFIG_LIMITS.ownerScopePattern.test(key)) {
      r.report(
        path,
        k,
        `has ${quote(key)}, which is not an owner scope name; use letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. local)`,
      );
      continue;
    }
    const kind = readHostKind(r, [...path, key], value, k);
    if (kind) out[key] = kind;
  }
  return out;
}

/**
 * Parses and validates the text of `$STAGEFLOW_HOME/config.yaml`.
 *
 * Every problem is collected before anything is thrown, so one error lists
 * them all. An empty file (or one with comments only) means all defaults.
 *
 * @param source - the file's text
 * @param file - shown in the error message, e.g. the file's path
 * @throws {@link HostConfigError} (`host_config_invalid`) with `details` = every problem
 */
export function parseHostConfig(source: string, file: string): HostConfig {
  const config = defaultHostConfig();
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > HOST_CONFIG_LIMITS.maxSourceBytes) {
    throw new HostConfigError(file, [
      {
        path: '',
        line: 1,
        column: 1,
        message: `The file is ${bytes} bytes; the limit is ${HOST_CONFIG_LIMITS.maxSourceBytes}. Is it the right file?`,
      },
    ]);
  }
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, uniqueKeys: false, prettyErrors: false, version: '1.2' });
  const problems: HostConfigProblem[] = [...doc.errors, ...doc.warnings].map((e) => {
    const { line, col } = lines.linePos(e.pos[0]);
    return { path: '', line, column: col, message: yamlMessage(e) };
  });
  if (problems.length > 0) throw new HostConfigError(file, problems);

  try {
    doc.toJS({ maxAliasCount: HOST_CONFIG_LIMITS.maxAliasCount });
  } catch (e) {
    throw new HostConfigError(file, [
      {
        path: '',
        line: 1,
        column: 1,
        message: `YAML aliases expand too far (${(e as Error).message}); write the values out instead of using anchors and aliases`,
      },
    ]);
  }

  const r = new HostConfigReader(doc, lines);
  const root = r.resolve(doc.contents);
  if (root === null || (isScalar(root) && root.value === null)) return config;
  if (!isMap(root)) {
    r.report(
      [],
      root,
      'The file must be a mapping with a browser key, e.g.\n    browser:\n      blocked_sites: [example.com]',
    );
  } else {
    for (const { key, keyNode, value } of r.entries([], root, ROOT_KEYS)) {
      if (key === 'browser') readBrowser(r, value, keyNode, config);
    }
  }
  if (r.problems.length > 0) {
    throw new HostConfigError(
      file,
      [...r.problems].sort((a, b) => a.line - b.line || a.column - b.column),
    );
  }
  return config;
}
