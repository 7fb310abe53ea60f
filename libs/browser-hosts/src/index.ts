export type {
  BrowserExit,
  BrowserHostAdapter,
  BrowserOwner,
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
export {
  ContainerBrowser,
  ContainerChromeAdapter,
  type ContainerChromeAdapterOptions,
} from './lib/container/container-chrome.adapter';
export {
  browserContainerName,
  browserNetworkName,
  LABELS as SANDBOX_LABELS,
  profileVolumeName,
  SANDBOX,
  type RelayExposure,
  type SandboxContainer,
} from './lib/container/sandbox-container';
export { launchThrowaway, type ThrowawayBrowser, type ThrowawayLaunchOptions } from './lib/throwaway-browser';
export {
  AllowlistEnforcer,
  type AllowlistBlock,
  type AllowlistEnforcerOptions,
} from './lib/allowlist-enforcer';
export { isHostAllowed, judgeUrl, parseAllowDomains, type AllowDomains, type UrlVerdict } from './lib/allowlist';
