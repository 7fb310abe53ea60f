import { BlockedSiteConflict, BrowserSiteBlockedError } from './host-config.errors';
import { HostConfig } from './host-config.model';
import { hostOf, isSameOrSubdomain } from './hostname';

/**
 * The `browser.blocked_sites` entry that blocks a URL or host, if any: the
 * host itself or any subdomain of it. Case, port, path and a trailing dot are
 * ignored; `notexample.com` is not under `example.com`.
 *
 * @param urlOrHost - `https://a.example.com/x`, `a.example.com:8443` or `example.com.`
 * @returns the blocked site, or `undefined` (also for URLs with no host such as `about:blank`)
 */
export function isSiteBlocked(config: HostConfig, urlOrHost: string): string | undefined {
  const host = hostOf(urlOrHost);
  if (host === undefined) return undefined;
  return config.browser.blockedSites.find((site) => isSameOrSubdomain(host, site));
}

/** The browser fields of a stage that name sites, as the pipeline loader produced them. */
export interface StageSites {
  /** Used in the error message. */
  stageId?: string;
  /** `browser.allow_domains`: hosts or `*.example.com` patterns. */
  allowDomains?: readonly string[];
  /** `browser.check.url`. */
  checkUrl?: string;
  /** `browser.login_url`. */
  loginUrl?: string;
}

/**
 * Refuses a stage whose allow_domains, check URL or login URL touch a blocked
 * site, before its browser opens. A pattern `*.example.org` also touches
 * every blocked site under `example.org`, since it lets the agent go there.
 *
 * @throws {@link BrowserSiteBlockedError} (`browser_site_blocked`, 422) naming each field and site
 */
export function checkStageAgainstBlockedSites(config: HostConfig, stage: StageSites): void {
  const conflicts: BlockedSiteConflict[] = [];
  const check = (field: string, value: string | undefined): void => {
    if (value === undefined) return;
    const host = hostOf(value.replace(/^\*\./, ''));
    if (host === undefined) return;
    const site =
      config.browser.blockedSites.find((s) => isSameOrSubdomain(host, s)) ??
      (value.startsWith('*.') ? config.browser.blockedSites.find((s) => isSameOrSubdomain(s, host)) : undefined);
    if (site !== undefined) conflicts.push({ field, host: value.startsWith('*.') ? `*.${host}` : host, site });
  };
  (stage.allowDomains ?? []).forEach((d, i) => check(`browser.allow_domains[${i}]`, d));
  check('browser.check.url', stage.checkUrl);
  check('browser.login_url', stage.loginUrl);
  if (conflicts.length > 0) throw new BrowserSiteBlockedError(conflicts, stage.stageId);
}
