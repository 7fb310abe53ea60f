import { BrowserHostKind, HostConfig } from './host-config.model';

/**
 * Where the shared browsers of an owner scope run: `browser.owner_hosts[scope]`
 * when listed, otherwise `browser.host`.
 */
export function hostFor(config: HostConfig, ownerScope: string): BrowserHostKind {
  const { ownerHosts, host } = config.browser;
  return Object.prototype.hasOwnProperty.call(ownerHosts, ownerScope) ? ownerHosts[ownerScope] : host;
}
