import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultHome, Env, EnvReader, LOG_LEVELS, LogLevel } from './env';

/** Where Redis is and how Stageflow names its keys there. */
export interface RedisConfig {
  /** @defaultValue `redis://127.0.0.1:6379` (env `STAGEFLOW_REDIS_URL`) */
  url: string;
  /** Key prefix for every Stageflow key. @defaultValue `sf:` (env `STAGEFLOW_REDIS_PREFIX`) */
  prefix: string;
}

interface CommonConfig {
  redis: RedisConfig;
  /** @defaultValue `info` (env `STAGEFLOW_LOG_LEVEL`) */
  logLevel: LogLevel;
  /** Stageflow home: host config, profiles, audit. @defaultValue `~/.stageflow` (env `STAGEFLOW_HOME`) */
  home: string;
}

export interface ApiConfig extends CommonConfig {
  /** @defaultValue `127.0.0.1` (env `STAGEFLOW_API_HOST`) */
  host: string;
  /** @defaultValue 3000 (env `STAGEFLOW_API_PORT`) */
  port: number;
  /** Bearer token for REST and WebSocket; required when `host` is not loopback (env `STAGEFLOW_API_TOKEN`). */
  token?: string;
  /** Largest accepted request body in bytes. @defaultValue 1 MiB (env `STAGEFLOW_API_BODY_LIMIT`) */
  bodyLimitBytes: number;
  /** Folder with the built console, served at `/`. (env `STAGEFLOW_CONSOLE_DIR`) */
  consoleDir?: string;
  /**
   * Where stage artifacts are kept, read-only for the api: the same folder the
   * runners write. @defaultValue `<home>/artifacts` (env `STAGEFLOW_ARTIFACTS_ROOT`)
   */
  artifactsRoot: string;
  /**
   * live-view-relay's internal address: the api forwards live-view WebSockets there.
   * Scheme, host and port only. @defaultValue `http://127.0.0.1:3003` (env `STAGEFLOW_LIVE_VIEW_URL`)
   */
  liveViewUrl: string;
  /**
   * browser-host's internal address: "Check now" on a profile runs there.
   * @defaultValue `http://127.0.0.1:3002` (env `STAGEFLOW_BROWSER_HOST_URL`)
   */
  browserHostUrl: string;
}

export interface RunnerConfig extends CommonConfig {
  /** Stage jobs one runner process executes at once. @defaultValue 4 (env `STAGEFLOW_RUNNER_CONCURRENCY`) */
  concurrency: number;
  /** Folder for stage working dirs and envelopes. @defaultValue `<home>/work` (env `STAGEFLOW_WORK_DIR`) */
  workDir: string;
  /**
   * BullMQ lock duration in ms: a killed runner's job is taken back after at most
   * lockDurationMs + stalledIntervalMs. @defaultValue 5000 (env `STAGEFLOW_RUNNER_LOCK_MS`)
   */
  lockDurationMs: number;
  /** BullMQ stalled-job check interval in ms. @defaultValue 5000 (env `STAGEFLOW_RUNNER_STALLED_MS`) */
  stalledIntervalMs: number;
  /** Health endpoint, loopback only. @defaultValue 3001 (env `STAGEFLOW_RUNNER_HEALTH_PORT`) */
  healthPort: number;
  /** How often the abandoned-run check runs, ms. @defaultValue 10000 (env `STAGEFLOW_ABANDON_CHECK_MS`) */
  abandonCheckMs: number;
  /**
   * browser-host's internal address: browser stages open their tab there.
   * @defaultValue `http://127.0.0.1:3002` (env `STAGEFLOW_BROWSER_HOST_URL`)
   */
  browserHostUrl: string;
  /**
   * Where stage artifacts are kept: `<root>/<run>/<stage>/<attempt>/<name>`.
   * @defaultValue `<home>/artifacts` (env `STAGEFLOW_ARTIFACTS_ROOT`)
   */
  artifactsRoot: string;
  /** Largest artifact in bytes. @defaultValue 64 MiB (env `STAGEFLOW_ARTIFACT_MAX_BYTES`) */
  artifactMaxBytes: number;
}

/**
 * How browser-host starts Chromium and where it keeps per-run files. Read from the
 * environment here, so the browser-hosts lib and the app never touch `process.env`.
 */
export interface BrowserHostSettings {
  /** Chromium binary when Host config sets no `browser.executable_path`. @defaultValue `/usr/bin/chromium` (env `STAGEFLOW_CHROMIUM`) */
  chromiumPath: string;
  /**
   * Names this host's browsers in their command line and its registry entries; the
   * orphan sweep only touches its own. Keep it stable across restarts, unique per
   * browser-host sharing a machine. @defaultValue `local` (env `STAGEFLOW_HOST_ID`)
   */
  hostId: string;
  /** The Host's X display, if any (env `DISPLAY`). */
  display?: string;
  /** The Host's Wayland display, if any (env `WAYLAND_DISPLAY`). */
  waylandDisplay?: string;
  /** Where the Wayland socket lives (env `XDG_RUNTIME_DIR`). */
  xdgRuntimeDir?: string;
  /** PATH for finding `Xvfb` and for Chromium's children. @defaultValue a system PATH (env `PATH`) */
  searchPath: string;
  /** Parent of the throw-away profiles and the runtime dir. @defaultValue the OS temp dir (env `STAGEFLOW_BROWSER_TMP`) */
  tempRoot: string;
  /**
   * Folder (0700) holding one agent-browser socket dir per run. Unix socket paths are
   * limited to 107 bytes, so keep it short. @defaultValue `<tempRoot>/stageflow-<hostId>-run`
   * (env `STAGEFLOW_BROWSER_RUNTIME_DIR`)
   */
  runtimeDir: string;
  /** Throw-away profiles, one folder per browser (0700). @defaultValue `<tempRoot>/stageflow-<hostId>-throwaway` */
  throwawayRoot: string;
  /**
   * The console serves the live view (a live-view-relay runs for this Host), so a
   * login gate on a Host with no screen can hand the browser over there.
   * @defaultValue false (env `STAGEFLOW_LIVE_VIEW`: `true` or `false`)
   */
  liveView: boolean;
  /** browser-host runs inside a container (a login hand-off failure then says to log in on a machine with a screen). @defaultValue whether `/.dockerenv` exists (env `STAGEFLOW_IN_CONTAINER`) */
  inContainer: boolean;
  /**
   * The Docker engine's unix socket, for the container host (`browser.host: container`).
   * @defaultValue `/var/run/docker.sock` (env `DOCKER_HOST`, `unix://` only)
   */
  dockerSocket: string;
  /**
   * Overrides Host config's `browser.host` for this start, so a deployment can pick
   * the adapter without editing `$STAGEFLOW_HOME/config.yaml` (compose's default is
   * `container`). `owner_hosts` still wins per scope. (env `STAGEFLOW_BROWSER_HOST`:
   * `local` or `container`)
   */
  hostKindOverride?: 'local' | 'container';
  /**
   * Hand stages a local browser's debugging port on this address (through a relay)
   * instead of 127.0.0.1: browser-host runs in a container and stages in another
   * (compose with the local adapter). `auto` = this container's IPv4 address.
   * (env `STAGEFLOW_BROWSER_CDP_ADDRESS`)
   */
  publishCdpAddress?: string;
  /**
   * The Docker network browser-host itself runs on, when it runs in compose: browser
   * containers join it and publish nothing. Unset when browser-host runs on the Docker
   * host: their debugging relay is published on 127.0.0.1 only. (env `STAGEFLOW_BROWSER_NETWORK`)
   */
  browserNetwork?: string;
}

export interface ServiceConfig extends CommonConfig {
  host: string;
  port: number;
  /** Browser settings; only browser-host uses them. */
  browser: BrowserHostSettings;
}

/** live-view-relay: where it listens and where browser-host is ("Reopen browser tab" asks it). */
export interface RelayConfig extends CommonConfig {
  /** @defaultValue `127.0.0.1` (env `STAGEFLOW_RELAY_BIND`) */
  host: string;
  /** @defaultValue 3003 (env `STAGEFLOW_RELAY_PORT`) */
  port: number;
  /** browser-host's internal address. @defaultValue `http://127.0.0.1:3002` (env `STAGEFLOW_BROWSER_HOST_URL`) */
  browserHostUrl: string;
}

function common(r: EnvReader, env: Env): CommonConfig {
  return {
    redis: {
      url: r.url('STAGEFLOW_REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
      prefix: r.string('STAGEFLOW_REDIS_PREFIX', 'sf:'),
    },
    logLevel: r.oneOf('STAGEFLOW_LOG_LEVEL', 'info', LOG_LEVELS),
    home: defaultHome(env),
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

function bindHost(r: EnvReader, name: string): string {
  const host = r.string(name, '127.0.0.1');
  if (host !== 'localhost' && isIP(host) === 0) r.problems.push(`${name}="${host}" must be an IP address or localhost`);
  return host;
}

/**
 * The artifacts root: absolute when set, so the api and the runners (other
 * processes, other working directories) name the same folder.
 */
function artifactsRoot(r: EnvReader, home: string): string {
  const value = r.optional('STAGEFLOW_ARTIFACTS_ROOT');
  if (value === undefined) return resolve(home, 'artifacts');
  if (!value.startsWith('/')) {
    r.problems.push(
      `STAGEFLOW_ARTIFACTS_ROOT="${value}" must be an absolute path (the api and every runner must name the same folder), e.g. /var/lib/stageflow-artifacts`,
    );
  }
  return value;
}

export function loadApiConfig(env: Env = process.env): ApiConfig {
  const r = new EnvReader(env);
  const host = bindHost(r, 'STAGEFLOW_API_HOST');
  const token = r.optional('STAGEFLOW_API_TOKEN');
  if (!isLoopback(host) && !token) {
    r.problems.push(
      `STAGEFLOW_API_HOST="${host}" is not a loopback address, so the API would be reachable by others: ` +
        'set STAGEFLOW_API_TOKEN to a long random secret (clients send it as "Authorization: Bearer <token>"), ' +
        'or bind to 127.0.0.1',
    );
  }
  if (token !== undefined && token.length < 16) r.problems.push('STAGEFLOW_API_TOKEN must be at least 16 characters');
  const base = common(r, env);
  const cfg: ApiConfig = {
    ...base,
    host,
    port: r.int('STAGEFLOW_API_PORT', 3000, 1, 65535),
    token,
    bodyLimitBytes: r.int('STAGEFLOW_API_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    consoleDir: r.optional('STAGEFLOW_CONSOLE_DIR'),
    artifactsRoot: artifactsRoot(r, base.home),
    liveViewUrl: serviceUrl(r, 'STAGEFLOW_LIVE_VIEW_URL', 'http://127.0.0.1:3003'),
    browserHostUrl: serviceUrl(r, 'STAGEFLOW_BROWSER_HOST_URL', 'http://127.0.0.1:3002'),
  };
  r.done();
  return cfg;
}

export function loadRunnerConfig(env: Env = process.env): RunnerConfig {
  const r = new EnvReader(env);
  const base = common(r, env);
  const cfg: RunnerConfig = {
    ...base,
    concurrency: r.int('STAGEFLOW_RUNNER_CONCURRENCY', 4, 1, 256),
    workDir: r.string('STAGEFLOW_WORK_DIR', `${base.home}/work`),
    lockDurationMs: r.int('STAGEFLOW_RUNNER_LOCK_MS', 5000, 1000, 600000),
    stalledIntervalMs: r.int('STAGEFLOW_RUNNER_STALLED_MS', 5000, 1000, 600000),
    healthPort: r.int('STAGEFLOW_RUNNER_HEALTH_PORT', 3001, 1, 65535),
    abandonCheckMs: r.int('STAGEFLOW_ABANDON_CHECK_MS', 10000, 500, 3600000),
    browserHostUrl: r.url('STAGEFLOW_BROWSER_HOST_URL', 'http://127.0.0.1:3002', ['http:', 'https:']),
    artifactsRoot: artifactsRoot(r, base.home),
    artifactMaxBytes: r.int('STAGEFLOW_ARTIFACT_MAX_BYTES', 64 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
  };
  r.done();
  return cfg;
}

export function loadRelayConfig(env: Env = process.env): RelayConfig {
  const r = new EnvReader(env);
  const cfg: RelayConfig = {
    ...common(r, env),
    host: bindHost(r, 'STAGEFLOW_RELAY_BIND'),
    port: r.int('STAGEFLOW_RELAY_PORT', 3003, 1, 65535),
    browserHostUrl: serviceUrl(r, 'STAGEFLOW_BROWSER_HOST_URL', 'http://127.0.0.1:3002'),
  };
  r.done();
  return cfg;
}

/** An internal service's base address: http(s), a host and a port, nothing after them (no path, query or credentials). */
function serviceUrl(r: EnvReader, name: string, fallback: string): string {
  const value = r.url(name, fallback, ['http:', 'https:']);
  try {
    const url = new URL(value);
    if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
      r.problems.push(`${name}="${value}" must be only a scheme, host and port, such as ${fallback}`);
    }
  } catch {
    // r.url reported it.
  }
  return value.replace(/\/+$/, '');
}

const HOST_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Docker's own rule for network names, bounded. */
const DOCKER_NETWORK = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The runtime dir plus `/<run id>/<session>.sock` must fit a unix socket path (107 bytes). */
const MAX_RUNTIME_DIR = 48;

function absolutePath(r: EnvReader, name: string, fallback: string): string {
  const value = r.string(name, fallback);
  if (!value.startsWith('/')) r.problems.push(`${name}="${value}" must be an absolute path`);
  return value;
}

/** `DOCKER_HOST=unix:///path` → `/path`; the container host speaks to Docker over its unix socket only. */
function dockerSocket(r: EnvReader): string {
  const raw = r.optional('DOCKER_HOST');
  if (raw === undefined) return '/var/run/docker.sock';
  const path = raw.startsWith('unix://') ? raw.slice('unix://'.length) : '';
  if (!path.startsWith('/')) {
    r.problems.push(
      `DOCKER_HOST="${raw}" is not a unix socket: browser-host's container host talks to the Docker engine over ` +
        'its unix socket only; set DOCKER_HOST=unix:///var/run/docker.sock or unset it',
    );
    return '/var/run/docker.sock';
  }
  return path;
}

function browserHostSettings(r: EnvReader, env: Env): BrowserHostSettings {
  const hostId = r.string('STAGEFLOW_HOST_ID', 'local');
  if (!HOST_ID.test(hostId) || hostId.includes('..')) {
    r.problems.push(
      `STAGEFLOW_HOST_ID="${hostId}" must be 1-64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    );
  }
  const tempRoot = absolutePath(r, 'STAGEFLOW_BROWSER_TMP', tmpdir());
  const runtimeDir = absolutePath(r, 'STAGEFLOW_BROWSER_RUNTIME_DIR', join(tempRoot, `stageflow-${hostId}-run`));
  if (Buffer.byteLength(runtimeDir) > MAX_RUNTIME_DIR) {
    r.problems.push(
      `the browser runtime dir "${runtimeDir}" is longer than ${MAX_RUNTIME_DIR} bytes: agent-browser's socket ` +
        'paths inside it would not fit a unix socket; set STAGEFLOW_BROWSER_RUNTIME_DIR (or STAGEFLOW_BROWSER_TMP) to a shorter path such as /tmp/sf-run',
    );
  }
  const browserNetwork = r.optional('STAGEFLOW_BROWSER_NETWORK');
  if (browserNetwork !== undefined && !DOCKER_NETWORK.test(browserNetwork)) {
    r.problems.push(
      `STAGEFLOW_BROWSER_NETWORK="${browserNetwork}" must be a Docker network name (letters, digits, "_", "." or "-"), ` +
        'the one browser-host runs on in compose, e.g. stageflow_default',
    );
  }
  const hostKind = r.optional('STAGEFLOW_BROWSER_HOST');
  if (hostKind !== undefined && hostKind !== 'local' && hostKind !== 'container') {
    r.problems.push(`STAGEFLOW_BROWSER_HOST="${hostKind}" must be local or container (which browser host runs shared browsers)`);
  }
  const publishCdp = r.optional('STAGEFLOW_BROWSER_CDP_ADDRESS');
  if (publishCdp !== undefined && publishCdp !== 'auto' && isIP(publishCdp) !== 4) {
    r.problems.push(`STAGEFLOW_BROWSER_CDP_ADDRESS="${publishCdp}" must be auto or an IPv4 address of this machine`);
  }
  return {
    ...(publishCdp !== undefined ? { publishCdpAddress: publishCdp } : {}),
    dockerSocket: dockerSocket(r),
    ...(hostKind === 'local' || hostKind === 'container' ? { hostKindOverride: hostKind } : {}),
    ...(browserNetwork !== undefined ? { browserNetwork } : {}),
    chromiumPath: absolutePath(r, 'STAGEFLOW_CHROMIUM', '/usr/bin/chromium'),
    hostId,
    display: r.optional('DISPLAY'),
    waylandDisplay: r.optional('WAYLAND_DISPLAY'),
    xdgRuntimeDir: r.optional('XDG_RUNTIME_DIR'),
    searchPath: env['PATH'] || DEFAULT_PATH,
    tempRoot,
    runtimeDir,
    throwawayRoot: join(tempRoot, `stageflow-${hostId}-throwaway`),
    liveView: r.oneOf('STAGEFLOW_LIVE_VIEW', 'false', ['true', 'false']) === 'true',
    inContainer: r.oneOf('STAGEFLOW_IN_CONTAINER', existsSync('/.dockerenv') ? 'true' : 'false', ['true', 'false']) === 'true',
  };
}

/** browser-host (default port 3002) and live-view-relay (default port 3003). */
export function loadServiceConfig(service: 'browser-host' | 'live-view-relay', env: Env = process.env): ServiceConfig {
  const r = new EnvReader(env);
  const prefix = service === 'browser-host' ? 'STAGEFLOW_BROWSER_HOST' : 'STAGEFLOW_RELAY';
  const cfg: ServiceConfig = {
    ...common(r, env),
    host: bindHost(r, `${prefix}_BIND`),
    port: r.int(`${prefix}_PORT`, service === 'browser-host' ? 3002 : 3003, 1, 65535),
    browser: browserHostSettings(r, env),
  };
  r.done();
  return cfg;
}
