import { Inject, Injectable, Logger } from '@nestjs/common';
import { CdpConnection, isCdpError } from '@stageflow/cdp';
import { StageflowError, type LoginCheckRequest, type LoginCheckResult } from '@stageflow/contracts';
import { checkStageAgainstBlockedSites, type HostConfig } from '@stageflow/host-config';
import { HOST_CONFIG } from '../browsers/browser-host.tokens';
import { StageSessions } from './stage-sessions.service';

/** An exception thrown by an expression evaluated in the page. */
class PageScriptError extends Error {}

/** How long the check page may take to load, and how long a `selector` may take to appear after that. */
export const CHECK_LOAD_TIMEOUT_MS = 30_000;
export const CHECK_SELECTOR_WAIT_MS = 5_000;

/**
 * `logged_out_url` matching: a pattern with `*` is a glob over the whole URL
 * (`*` = any run of characters); one without is a substring.
 */
export function urlMatches(pattern: string, url: string): boolean {
  if (!pattern.includes('*')) return url.includes(pattern);
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(url);
}

export interface PageFacts {
  /** The page's address after redirects. */
  finalUrl: string;
  /** Whether `selector` is on the page (only when the check names one). */
  selectorPresent?: boolean;
  /** Whether the cookie is set for the check URL (only when the check names one). */
  cookiePresent?: boolean;
}

/** Logged in when every criterion the check names holds: not on a logged-out URL, the selector there, the cookie set. */
export function judgeLogin(criteria: LoginCheckRequest, facts: PageFacts): boolean {
  if (criteria.loggedOutUrl !== undefined && urlMatches(criteria.loggedOutUrl, facts.finalUrl)) return false;
  if (criteria.selector !== undefined && !facts.selectorPresent) return false;
  if (criteria.cookie !== undefined && !facts.cookiePresent) return false;
  return true;
}

/**
 * Runs a stage's login check in its own tab: navigates to the check page with
 * the run's profile, waits for it to load, reads the facts the criteria need
 * and judges. Page content never leaves this class; the answer is
 * `{logged_in, url}`.
 */
@Injectable()
export class LoginChecks {
  private readonly log = new Logger('LoginChecks');

  constructor(
    private readonly sessions: StageSessions,
    @Inject(HOST_CONFIG) private readonly hostConfig: HostConfig,
  ) {}

  async check(sessionId: string, criteria: LoginCheckRequest): Promise<LoginCheckResult> {
    const session = await this.sessions.view(sessionId);
    // The open checked the stage's check URL; this body comes separately, so again.
    checkStageAgainstBlockedSites(this.hostConfig, { stageId: session.stageId, allowDomains: [], checkUrl: criteria.url });
    return this.checkTab(session.cdpEndpoint, session.targetId, criteria, { runId: session.runId, stageId: session.stageId, profile: session.profile });
  }

  /**
   * Judges the login in a tab the caller opened (a stage's, or a profile check's):
   * navigates it to the check page and reads only what the criteria need.
   * The caller has checked `criteria.url` against the blocked sites.
   */
  async checkTab(cdpEndpoint: string, targetId: string, criteria: LoginCheckRequest, ids: Record<string, string | undefined>): Promise<LoginCheckResult> {
    const cdp = await CdpConnection.connect(cdpEndpoint, { connectTimeoutMs: 5000, callTimeoutMs: 10_000 });
    try {
      const page = await cdp.attachToTab(targetId);
      const facts = await this.readPage(cdp, page, criteria);
      const result = { logged_in: judgeLogin(criteria, facts), url: facts.finalUrl };
      this.log.log({ msg: `Login check: ${result.logged_in ? 'logged in' : 'logged out'}`, ...ids });
      await cdp.send('Target.detachFromTarget', { sessionId: page }).catch(() => undefined);
      return result;
    } catch (error) {
      if (error instanceof StageflowError && !isCdpError(error)) throw error;
      throw new StageflowError(
        'login_check_failed',
        `The login check could not read ${criteria.url}: ${(error as Error).message}`,
        502,
      );
    } finally {
      await cdp.close();
    }
  }

  private async readPage(cdp: CdpConnection, page: string, criteria: LoginCheckRequest): Promise<PageFacts> {
    const on = { sessionId: page };
    await cdp.send('Page.enable', {}, on);
    const loaded = cdp.waitForEvent('Page.loadEventFired', { ...on, timeoutMs: CHECK_LOAD_TIMEOUT_MS });
    loaded.catch(() => undefined);
    const nav = await cdp.send<{ errorText?: string }>('Page.navigate', { url: criteria.url }, { ...on, timeoutMs: CHECK_LOAD_TIMEOUT_MS });
    if (nav.errorText) {
      throw new StageflowError(
        'login_check_unreachable',
        `The login check page ${criteria.url} did not load (${nav.errorText}). Is the site up and reachable from the browser?`,
        502,
      );
    }
    await loaded;
    const evaluate = async <T>(expression: string): Promise<T> => {
      const reply = await cdp.send<{ result: { value: T }; exceptionDetails?: { exception?: { description?: string } } }>(
        'Runtime.evaluate',
        { expression, returnByValue: true },
        on,
      );
      if (reply.exceptionDetails) throw new PageScriptError(reply.exceptionDetails.exception?.description ?? 'the page threw');
      return reply.result.value;
    };

    const facts: PageFacts = { finalUrl: '' };
    if (criteria.selector !== undefined) {
      // A page may render the logged-in marker after load: poll briefly.
      const probe = `document.querySelector(${JSON.stringify(criteria.selector)}) !== null`;
      const until = Date.now() + CHECK_SELECTOR_WAIT_MS;
      let present = false;
      for (;;) {
        try {
          present = await evaluate<boolean>(probe);
        } catch (error) {
          if (error instanceof PageScriptError) {
            throw new StageflowError('login_check_bad_selector', `browser.check.selector "${criteria.selector}" is not a valid CSS selector; fix it in the pipeline.`, 422);
          }
          throw error;
        }
        if (present || Date.now() >= until) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      facts.selectorPresent = present;
    }
    facts.finalUrl = await evaluate<string>('location.href');
    if (criteria.cookie !== undefined) {
      const { cookies } = await cdp.send<{ cookies: Array<{ name: string }> }>('Network.getCookies', { urls: [criteria.url] }, on);
      facts.cookiePresent = cookies.some((c) => c.name === criteria.cookie);
    }
    return facts;
  }
}
