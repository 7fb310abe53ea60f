import type Docker from 'dockerode';
import type { BrowserOwner, HeadedMode } from '../browser-host.port';

/**
 * What the container host and the sandbox image (docker/Dockerfile.browser-sandbox)
 * agree on. Changing one of these means changing the image's entry script too.
 */
export const SANDBOX = {
  /** uid:gid of the image's `chrome` user. Set on every container, so even another image never runs as root. */
  user: '1000:1000',
  /** Where the profile volume is mounted (`--user-data-dir`). */
  profileMount: '/profile',
  /** Chrome's own debugging port, on the container's loopback only. */
  cdpPort: 9222,
  /** The relay (socat) on the container's interface, forwarding to {@link SANDBOX.cdpPort}. */
  relayPort: 9223,
  /**
   * The only writable place besides the profile: Chromium's HOME (NSS db, caches), its
   * temp files, the X socket of Xvfb. `noexec`: nothing in there is ever run. Counted
   * against the memory limit.
   */
  tmpfs: 'rw,nosuid,nodev,noexec,size=256m,mode=1777',
} as const;

/** Labels on browser containers (and the profile volume: scope and profile). */
export const LABELS = {
  run: 'stageflow.run',
  profile: 'stageflow.profile',
  scope: 'stageflow.scope',
  /** The browser-host (`STAGEFLOW_HOST_ID`) that started it: its sweep touches only its own. */
  host: 'stageflow.host',
  browser: 'stageflow.browser',
  headedMode: 'stageflow.headed-mode',
} as const;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A scope or profile name that can go into a volume name (the profile store's rule). */
export function isSafeName(name: string): boolean {
  return NAME.test(name) && !name.includes('..');
}

/**
 * `sf-profile-<scope>-<profile>`: the profile of a container browser. Scope names may
 * hold `-`, so two (scope, profile) pairs can meet in one name; the volume's labels
 * say whose it is, and a launch refuses a volume labelled for another pair.
 */
export function profileVolumeName(scope: string, profile: string): string {
  return `sf-profile-${scope}-${profile}`;
}

/** One container per browser id, so Docker itself refuses a second one. */
export function browserContainerName(browserId: string): string {
  return `sf-browser-${browserId}`;
}

/** The network browser containers of a host join when browser-host runs on the Docker host. */
export function browserNetworkName(hostId: string): string {
  return `sf-browsers-${hostId}`;
}

/**
 * How browser-host reaches a browser container's relay:
 * - `published`: browser-host runs on the Docker host. The container joins the host's
 *   own network (inter-container traffic off) and its relay is published on
 *   127.0.0.1:<ephemeral> of the Docker host, nowhere else.
 * - `attached`: browser-host runs in compose. The container joins the stack's network
 *   and nothing is published; the relay is reached at the container's address there.
 */
export type RelayExposure = { mode: 'published'; network: string } | { mode: 'attached'; network: string };

export interface SandboxSpecInput {
  browserId: string;
  hostId: string;
  owner: BrowserOwner;
  headedMode: Extract<HeadedMode, 'xvfb' | 'headless'>;
  /** Chromium's arguments (the image's entry script runs Chromium with them). */
  args: string[];
  image: string;
  shmSizeBytes: number;
  memoryBytes: number;
  pidsLimit: number;
  exposure: RelayExposure;
}

/** The `docker create` of one browser container: hardened, labelled, its profile on a volume. */
export function sandboxContainerSpec(input: SandboxSpecInput): Docker.ContainerCreateOptions {
  const relay = `${SANDBOX.relayPort}/tcp`;
  return {
    name: browserContainerName(input.browserId),
    Image: input.image,
    Cmd: input.args,
    User: SANDBOX.user,
    Env: [`STAGEFLOW_XVFB=${input.headedMode === 'xvfb' ? '1' : '0'}`],
    Labels: {
      [LABELS.run]: input.owner.runId,
      [LABELS.profile]: input.owner.profile,
      [LABELS.scope]: input.owner.scope,
      [LABELS.host]: input.hostId,
      [LABELS.browser]: input.browserId,
      [LABELS.headedMode]: input.headedMode,
    },
    ExposedPorts: { [relay]: {} },
    HostConfig: {
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': SANDBOX.tmpfs },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      PidsLimit: input.pidsLimit,
      Memory: input.memoryBytes,
      // The same as Memory: no swap on top of the limit.
      MemorySwap: input.memoryBytes,
      ShmSize: input.shmSizeBytes,
      Mounts: [
        { Type: 'volume', Source: profileVolumeName(input.owner.scope, input.owner.profile), Target: SANDBOX.profileMount, ReadOnly: false },
      ],
      NetworkMode: input.exposure.network,
      // Loopback of the Docker host only, on a port Docker picks (no clash between runs).
      PortBindings: input.exposure.mode === 'published' ? { [relay]: [{ HostIp: '127.0.0.1', HostPort: '' }] } : {},
      // browser-host decides about restarts (next stage session), and removes the container itself.
      RestartPolicy: { Name: 'no' },
      AutoRemove: false,
      // Chromium's stderr is chatty; keep a bounded tail for launch errors.
      LogConfig: { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '2' } },
    },
  };
}

/** Where the relay answers, from `docker inspect` of a running container; `undefined` when it has no such address. */
export function relayAddress(info: Docker.ContainerInspectInfo, exposure: RelayExposure): { host: string; port: number } | undefined {
  if (exposure.mode === 'published') {
    const bindings = info.NetworkSettings?.Ports?.[`${SANDBOX.relayPort}/tcp`] ?? [];
    const binding = bindings.find((b) => b.HostIp === '127.0.0.1' && /^\d+$/.test(b.HostPort));
    return binding ? { host: '127.0.0.1', port: Number(binding.HostPort) } : undefined;
  }
  const ip = info.NetworkSettings?.Networks?.[exposure.network]?.IPAddress;
  return ip ? { host: ip, port: SANDBOX.relayPort } : undefined;
}

/** A browser container as its labels describe it. */
export interface SandboxContainer {
  containerId: string;
  browserId: string;
  runId: string;
  scope: string;
  profile: string;
  hostId: string;
  running: boolean;
}

/** Reads a container's Stageflow labels; `undefined` when it is not a browser container. */
export function sandboxOf(
  containerId: string,
  labels: Record<string, string> | undefined,
  running: boolean,
): SandboxContainer | undefined {
  const l = labels ?? {};
  const [browserId, runId, scope, profile, hostId] = [LABELS.browser, LABELS.run, LABELS.scope, LABELS.profile, LABELS.host].map((k) => l[k]);
  if (!browserId || !runId || !scope || !profile || !hostId) return undefined;
  return { containerId, browserId, runId, scope, profile, hostId, running };
}

/**
 * The text of a non-TTY container's log stream: Docker prefixes each chunk with an
 * 8-byte header (stream, 3 zero bytes, big-endian length).
 */
export function demuxDockerLog(buffer: Buffer): string {
  const framed = (at: number) => at + 8 <= buffer.length && buffer[at] <= 2 && buffer[at + 1] === 0 && buffer[at + 2] === 0 && buffer[at + 3] === 0;
  // A TTY container's log has no headers.
  if (buffer.length > 0 && !framed(0)) return buffer.toString('utf8');
  let out = '';
  for (let at = 0; framed(at); ) {
    const size = buffer.readUInt32BE(at + 4);
    out += buffer.subarray(at + 8, at + 8 + size).toString('utf8');
    at += 8 + size;
  }
  return out;
}
