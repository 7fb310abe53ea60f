import { CdpConnection, type TargetInfo } from '@stageflow/cdp';
import { judgeUrl, parseAllowDomains, reportableUrl, type AllowDomains } from './allowlist';

/** One host the enforcer refused, reported the first time it is seen. */
export interface AllowlistBlock {
  /** The host (or `file:`-style scheme) that was refused. */
  host: string;
  /** The first refused URL for that host, without query or fragment. */
  url: string;
  /** CDP resource type: `Document`, `Image`, `Script`, `XHR`, `Fetch`… */
  resourceType: string;
  /** The page, frame or worker target that asked for it. */
  targetId?: string;
}

export interface AllowlistEnforcerOptions {
  /** `allow_domains`: exact hosts and `*.example.com` wildcards. */
  allowDomains: readonly string[];
  /** Called once per refused host. Must not throw. */
  onBlocked?: (block: AllowlistBlock) => void;
  /** Called when the enforcer can no longer guarantee anything (its connection closed while not stopped). */
  onLost?: () => void;
  /** @defaultValue 10000 */
  callTimeoutMs?: number;
}

/** Targets whose requests we can intercept with the Fetch domain. */
const INTERCEPTED = new Set(['page', 'iframe', 'worker', 'shared_worker', 'service_worker']);
/** Targets that own child frames and dedicated workers, which need their own auto-attach. */
const FRAME_OWNERS = new Set(['page', 'iframe']);

const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true };

interface AttachedToTarget {
  sessionId: string;
  targetInfo: TargetInfo;
  waitingForDebugger: boolean;
}

interface RequestPaused {
  requestId: string;
  request: { url: string };
  resourceType: string;
}

/**
 * Enforces `allow_domains` at the browser, over its own CDP connection, for
 * throw-away browsers (agent-browser refuses `--allowed-domains` together with
 * `--cdp`). Every page, iframe and worker is attached before it runs
 * (`waitForDebuggerOnStart`), gets `Fetch.enable` for all URLs, and is then resumed;
 * paused requests to hosts outside the list fail with `BlockedByClient`.
 *
 * Limits (see docs/browser-hosts.md): WebSocket handshakes are not seen by the Fetch
 * domain; a CDP client with access to the browser could undo this; targets that
 * existed before {@link AllowlistEnforcer.start} may have made requests already.
 */
export class AllowlistEnforcer {
  private readonly blocked = new Map<string, AllowlistBlock>();
  /** sessionId → target it belongs to. */
  private readonly sessions = new Map<string, TargetInfo>();
  private readonly attachedTargets = new Set<string>();
  private readonly failures: string[] = [];
  private stopping = false;

  private constructor(
    private readonly cdp: CdpConnection,
    private readonly allow: AllowDomains,
    private readonly options: AllowlistEnforcerOptions,
  ) {}

  /**
   * Connects to the browser endpoint, starts watching every target, and attaches the
   * ones that already exist. Start it before the browser is handed to anyone.
   *
   * @throws BrowserHostError `allow_domain_invalid` for a bad entry; CdpError when the browser cannot be reached.
   */
  static async start(wsEndpoint: string, options: AllowlistEnforcerOptions): Promise<AllowlistEnforcer> {
    const allow = parseAllowDomains(options.allowDomains);
    const cdp = await CdpConnection.connect(wsEndpoint, { callTimeoutMs: options.callTimeoutMs ?? 10_000 });
    const enforcer = new AllowlistEnforcer(cdp, allow, options);
    try {
      await enforcer.watch();
    } catch (error) {
      await cdp.close();
      throw error;
    }
    return enforcer;
  }

  /** The first refused request of each host, in the order they happened. */
  get blocks(): AllowlistBlock[] {
    return [...this.blocked.values()];
  }

  /** Targets we could not set up (they were still resumed); for diagnostics. */
  get setupFailures(): readonly string[] {
    return this.failures;
  }

  /** Stops enforcing: closing the connection detaches every session, which also ends interception. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.cdp.close();
  }

  private async watch(): Promise<void> {
    this.cdp.on<AttachedToTarget>('Target.attachedToTarget', (event) => void this.onAttached(event));
    this.cdp.on<{ sessionId: string }>('Target.detachedFromTarget', ({ sessionId }) => this.onDetached(sessionId));
    this.cdp.on<RequestPaused>('Fetch.requestPaused', (event, sessionId) => void this.onPaused(event, sessionId));
    this.cdp.onClose(() => {
      if (!this.stopping) this.options.onLost?.();
    });
    await this.cdp.send('Target.setDiscoverTargets', { discover: true });
    // Browser-wide: new targets (tabs, popups, service workers) pause before their first
    // script or request until we resume them, and they pause for every client, so
    // onAttached must resume each one whatever else fails.
    await this.cdp.send('Target.setAutoAttach', AUTO_ATTACH);
    const { targetInfos } = await this.cdp.send<{ targetInfos: TargetInfo[] }>('Target.getTargets');
    for (const target of targetInfos) {
      if (!INTERCEPTED.has(target.type) || this.attachedTargets.has(target.targetId)) continue;
      try {
        const sessionId = await this.cdp.attachToTab(target.targetId);
        await this.onAttached({ sessionId, targetInfo: target, waitingForDebugger: false });
      } catch {
        // Gone between getTargets and attach.
      }
    }
  }

  private async onAttached({ sessionId, targetInfo, waitingForDebugger }: AttachedToTarget): Promise<void> {
    // A target reached twice (browser-wide and through its page) is set up once; the
    // second session is only resumed.
    const duplicate = this.attachedTargets.has(targetInfo.targetId);
    this.attachedTargets.add(targetInfo.targetId);
    this.sessions.set(sessionId, targetInfo);
    const on = { sessionId };
    try {
      if (duplicate) return;
      if (INTERCEPTED.has(targetInfo.type)) {
        await this.cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*', requestStage: 'Request' }] }, on);
      }
      if (FRAME_OWNERS.has(targetInfo.type)) {
        // Out-of-process iframes and dedicated workers are children of this target, not of the browser.
        await this.cdp.send('Target.setAutoAttach', AUTO_ATTACH, on);
      }
    } catch (error) {
      this.failures.push(`${targetInfo.type} ${targetInfo.targetId}: ${(error as Error).message}`);
    } finally {
      if (waitingForDebugger) {
        await this.cdp.send('Runtime.runIfWaitingForDebugger', {}, on).catch(() => undefined);
      }
    }
  }

  private onDetached(sessionId: string): void {
    const target = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    if (target && ![...this.sessions.values()].some((t) => t.targetId === target.targetId)) {
      this.attachedTargets.delete(target.targetId);
    }
  }

  private async onPaused(event: RequestPaused, sessionId: string | undefined): Promise<void> {
    const verdict = judgeUrl(event.request.url, this.allow);
    const on = { sessionId };
    try {
      if (verdict.allowed) {
        await this.cdp.send('Fetch.continueRequest', { requestId: event.requestId }, on);
        return;
      }
      await this.cdp.send('Fetch.failRequest', { requestId: event.requestId, errorReason: 'BlockedByClient' }, on);
    } catch {
      // The target went away with its request; nothing is waiting any more.
      return;
    }
    if (verdict.checked && !this.blocked.has(verdict.host)) {
      const block: AllowlistBlock = {
        host: verdict.host,
        url: reportableUrl(event.request.url),
        resourceType: event.resourceType,
        targetId: sessionId ? this.sessions.get(sessionId)?.targetId : undefined,
      };
      this.blocked.set(verdict.host, block);
      try {
        this.options.onBlocked?.(block);
      } catch {
        // A failing sink must not stop enforcement.
      }
    }
  }
}
