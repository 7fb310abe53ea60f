import { StageflowError } from '@stageflow/contracts';

/**
 * Stable codes of {@link CdpError}:
 * - `cdp_timeout`: the browser did not answer in time (a JS dialog blocks its page's
 *   protocol; a hung renderer; a browser that never wrote its port file).
 * - `cdp_unreachable`: nothing answers on the debugging port, or the browser exited
 *   before it could be reached.
 * - `cdp_closed`: the connection closed while a call was waiting (the browser exited).
 * - `cdp_protocol_error`: Chrome answered with an error (bad params, unknown target).
 * - `cdp_bad_port_file`: `DevToolsActivePort` exists but does not hold a port and path.
 */
export type CdpErrorCode =
  | 'cdp_timeout'
  | 'cdp_unreachable'
  | 'cdp_closed'
  | 'cdp_protocol_error'
  | 'cdp_bad_port_file';

const STATUS: Record<CdpErrorCode, number> = {
  cdp_timeout: 504,
  cdp_unreachable: 502,
  cdp_closed: 502,
  cdp_protocol_error: 502,
  cdp_bad_port_file: 502,
};

/** A failure talking to a browser over the Chrome DevTools Protocol. */
export class CdpError extends StageflowError {
  declare readonly code: CdpErrorCode;

  constructor(code: CdpErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, STATUS[code], details);
    this.name = 'CdpError';
  }
}

/** True when `error` is a {@link CdpError}, optionally with one of `codes`. */
export function isCdpError(error: unknown, ...codes: CdpErrorCode[]): error is CdpError {
  return error instanceof CdpError && (codes.length === 0 || codes.includes(error.code));
}
