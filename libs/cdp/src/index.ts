export { CdpError, isCdpError, type CdpErrorCode } from './lib/cdp.error';
export { withTimeout } from './lib/with-timeout';
export {
  browserWsEndpoint,
  isTcpPort,
  normalizeCdpEndpoint,
  parseDevToolsActivePort,
  type DevToolsActivePort,
} from './lib/cdp-endpoint';
export {
  DEVTOOLS_ACTIVE_PORT_FILE,
  readDevToolsActivePort,
  removeDevToolsActivePort,
  type ReadDevToolsActivePortOptions,
} from './lib/devtools-active-port';
export { browserVersion, type BrowserVersion, type BrowserVersionOptions } from './lib/browser-version';
export {
  CdpConnection,
  type CdpCallOptions,
  type CdpConnectOptions,
  type CdpEventListener,
  type TargetInfo,
} from './lib/cdp-connection';
