/** Where the shared browser of a (run, profile) runs. */
export type BrowserHostKind = 'local' | 'container';

/** Every accepted value of `browser.host` and of `browser.owner_hosts.<scope>`. */
export const BROWSER_HOST_KINDS: readonly BrowserHostKind[] = ['local', 'container'];

/** `browser.container`: how the container host starts a shared browser. */
export interface ContainerHostConfig {
  /** Image reference. @defaultValue `stageflow-browser-sandbox:local` */
  image: string;
  /** `--shm-size` in bytes. @defaultValue 1 GiB (`1g`) */
  shmSizeBytes: number;
  /** `--memory` in bytes. @defaultValue 1 GiB (`1g`) */
  memoryBytes: number;
  /** `--pids-limit`. @defaultValue 512 */
  pidsLimit: number;
}

/** `browser`: Host-wide browser settings. YAML stages can never override them. */
export interface BrowserHostConfig {
  /**
   * Lowercased ASCII hostnames (IDN in punycode, no trailing dot). Each one
   * blocks itself and every subdomain. @defaultValue `[]`
   */
  blockedSites: readonly string[];
  /** Chrome flags added after {@link HOST_SWITCHES} on every launch. @defaultValue `[]` */
  launchArgs: readonly string[];
  /** Absolute path of a Chrome or Chromium binary; absent → agent-browser's own Chrome. */
  executablePath?: string;
  /** How long a live view page dialog may wait before the Host dismisses it. @defaultValue 60 */
  dialogTimeoutSeconds: number;
  /** Where shared browsers run unless {@link BrowserHostConfig.ownerHosts} says otherwise. @defaultValue `local` */
  host: BrowserHostKind;
  container: ContainerHostConfig;
  /**
   * Owner scope → host, overriding {@link BrowserHostConfig.host}. A
   * null-prototype record: read it with {@link hostFor}. @defaultValue `{}`
   */
  ownerHosts: Readonly<Record<string, BrowserHostKind>>;
}

/** The parsed, validated `$STAGEFLOW_HOME/config.yaml`. */
export interface HostConfig {
  browser: BrowserHostConfig;
}

const GIB = 1024 * 1024 * 1024;

/** Bounds of the Host config format; the docs and the parser read the same numbers. */
export const HOST_CONFIG_LIMITS = {
  /** A larger file is refused before parsing. */
  maxSourceBytes: 64 * 1024,
  /** Passed to `yaml`'s `maxAliasCount`: stops "billion laughs" alias bombs. */
  maxAliasCount: 50,
  dialogTimeoutSeconds: {
    default: 60,
    min: 1,
    /**
     * agent-browser's screenshot and get url wedge once a dialog has been open
     * for about 150 seconds; the Host must dismiss it before that.
     */
    max: 150,
  },
  /** Docker refuses a memory limit under 6 MiB when the container starts; we refuse it at boot. */
  minContainerMemoryBytes: 6 * 1024 * 1024,
  maxBlockedSites: 1000,
  maxLaunchArgs: 100,
  maxLaunchArgLength: 4096,
  /** Owner scope names: one safe path segment (they name folders and Docker volumes). */
  ownerScopePattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
} as const;

/** A fresh config with every default, what a missing `config.yaml` means. */
export function defaultHostConfig(): HostConfig {
  return {
    browser: {
      blockedSites: [],
      launchArgs: [],
      dialogTimeoutSeconds: HOST_CONFIG_LIMITS.dialogTimeoutSeconds.default,
      host: 'local',
      container: {
        image: 'stageflow-browser-sandbox:local',
        shmSizeBytes: GIB,
        memoryBytes: GIB,
        pidsLimit: 512,
      },
      ownerHosts: Object.create(null) as Record<string, BrowserHostKind>,
    },
  };
}
