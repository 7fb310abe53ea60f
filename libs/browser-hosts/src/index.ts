export type {
  BrowserExit,
  BrowserHostAdapter,
  HeadedMode,
  HostCapabilities,
  LaunchedBrowser,
  LaunchOptions,
  ThrowawayCapableAdapter,
} from './lib/browser-host.port';
export { BrowserHostError, type BrowserHostErrorCode } from './lib/browser-host.error';
export { HOST_SWITCHES, buildChromeArgs, type ChromeArgsInput } from './lib/chrome-switches';
export {
  LocalChromeAdapter,
  type BrowserHostEvent,
  type LocalChromeAdapterOptions,
  type SweepReport,
} from './lib/local-chrome.adapter';
export { launchThrowaway, type ThrowawayBrowser, type ThrowawayLaunchOptions } from './lib/throwaway-browser';
export {
  AllowlistEnforcer,
  type AllowlistBlock,
  type AllowlistEnforcerOptions,
} from './lib/allowlist-enforcer';
export { isHostAllowed, judgeUrl, parseAllowDomains, type AllowDomains, type UrlVerdict } from './lib/allowlist';
