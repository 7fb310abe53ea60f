/**
 * The live-view wire protocol as the console speaks it. The message types,
 * limits and close codes are the relay's own (`libs/contracts/src/lib/live-view.ts`,
 * described in docs/live-view.md); this file checks what arrives before the view
 * acts on it, and checks the ticket the api hands out.
 *
 * - Ticket: `POST /api/runs/:run/stages/:stage/live-view/tickets` with `{mode}`
 *   answers `{ticket, mode, expiresAt, path}`; the WebSocket opens on
 *   `path?ticket=…` on the console's own origin.
 * - Relay → console: binary messages are JPEG pictures; text messages are
 *   {@link LiveViewServerMessage}s.
 * - Console → relay: {@link LiveViewClientMessage}s (built in `input-events.ts`).
 *   Coordinates are fractions (0..1) of the picture as shown.
 */
import {
  LIVE_VIEW_TICKET_PATTERN,
  liveViewPath,
  type LiveViewDialogKind,
  type LiveViewDialogMessage,
  type LiveViewEndReason,
  type LiveViewMode,
  type LiveViewServerMessage,
  type LiveViewTicket,
} from '@stageflow/contracts';

export type {
  LiveViewClientMessage,
  LiveViewDialogMessage,
  LiveViewFrameMetaMessage,
  LiveViewMode,
  LiveViewModifier,
  LiveViewMouseButton,
  LiveViewServerMessage,
  LiveViewTicket,
} from '@stageflow/contracts';

const DIALOG_KINDS: readonly LiveViewDialogKind[] = ['alert', 'confirm', 'prompt', 'beforeunload'];
const DIALOG_OUTCOMES = ['accepted', 'dismissed', 'timed-out', 'answered-elsewhere'] as const;
const END_REASONS: readonly LiveViewEndReason[] = ['gate-answered', 'stage-ended', 'run-ended', 'tab-closed', 'browser-gone', 'relay-stopping'];

/**
 * A text message from the relay, checked field by field against the contract;
 * `undefined` for anything else (not JSON, an unknown type, a missing or
 * mistyped field). Only the contract's fields are kept, so nothing else the
 * message carried can reach the page.
 */
export function parseLiveViewMessage(text: string): LiveViewServerMessage | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const m = v as Record<string, unknown>;
  const str = (k: string) => typeof m[k] === 'string';
  const optStr = (k: string) => m[k] === undefined || typeof m[k] === 'string';
  const num = (k: string) => typeof m[k] === 'number' && Number.isFinite(m[k]);
  const int = (k: string, min: number) => Number.isInteger(m[k]) && (m[k] as number) >= min;
  switch (m['type']) {
    case 'ready':
      if (!(m['mode'] === 'interactive' || m['mode'] === 'view-only') || !str('runId') || !str('stageId') || !int('attempt', 1) || !str('url') || !num('dialogTimeoutSeconds')) {
        return undefined;
      }
      return {
        type: 'ready',
        mode: m['mode'],
        runId: m['runId'] as string,
        stageId: m['stageId'] as string,
        attempt: m['attempt'] as number,
        url: m['url'] as string,
        dialogTimeoutSeconds: m['dialogTimeoutSeconds'] as number,
      };
    case 'frame-meta': {
      const keys = ['deviceWidth', 'deviceHeight', 'offsetTop', 'pageScaleFactor', 'scrollOffsetX', 'scrollOffsetY'] as const;
      if (!keys.every(num) || (m['deviceWidth'] as number) <= 0 || (m['deviceHeight'] as number) <= 0 || (m['pageScaleFactor'] as number) <= 0) return undefined;
      return {
        type: 'frame-meta',
        deviceWidth: m['deviceWidth'] as number,
        deviceHeight: m['deviceHeight'] as number,
        offsetTop: m['offsetTop'] as number,
        pageScaleFactor: m['pageScaleFactor'] as number,
        scrollOffsetX: m['scrollOffsetX'] as number,
        scrollOffsetY: m['scrollOffsetY'] as number,
      };
    }
    case 'url':
      return str('url') ? { type: 'url', url: m['url'] as string } : undefined;
    case 'popup':
      if (!(m['action'] === 'opened' || m['action'] === 'closed') || !str('url') || !int('depth', 0)) return undefined;
      return { type: 'popup', action: m['action'], url: m['url'] as string, depth: m['depth'] as number };
    case 'dialog': {
      if (!int('id', 1) || !DIALOG_KINDS.includes(m['kind'] as LiveViewDialogKind) || !str('message') || !optStr('defaultPrompt') || !str('url')) return undefined;
      if (typeof m['canAnswer'] !== 'boolean' || typeof m['autoAccepted'] !== 'boolean' || !(m['waitsFor'] === 'operator' || m['waitsFor'] === 'nobody') || !optStr('timeoutAt')) {
        return undefined;
      }
      const dialog: LiveViewDialogMessage = {
        type: 'dialog',
        id: m['id'] as number,
        kind: m['kind'] as LiveViewDialogKind,
        message: m['message'] as string,
        url: m['url'] as string,
        canAnswer: m['canAnswer'],
        waitsFor: m['waitsFor'],
        autoAccepted: m['autoAccepted'],
      };
      if (m['defaultPrompt'] !== undefined) dialog.defaultPrompt = m['defaultPrompt'] as string;
      if (m['timeoutAt'] !== undefined) dialog.timeoutAt = m['timeoutAt'] as string;
      return dialog;
    }
    case 'dialog-closed':
      if (!int('id', 1) || !DIALOG_OUTCOMES.includes(m['outcome'] as (typeof DIALOG_OUTCOMES)[number]) || !optStr('message')) return undefined;
      return {
        type: 'dialog-closed',
        id: m['id'] as number,
        outcome: m['outcome'] as (typeof DIALOG_OUTCOMES)[number],
        ...(m['message'] !== undefined ? { message: m['message'] as string } : {}),
      };
    case 'reopened':
      return str('url') ? { type: 'reopened', url: m['url'] as string } : undefined;
    case 'ended':
      // A reason this console does not know yet still ends the view: the relay closes the socket after it.
      return str('reason') && str('message') ? { type: 'ended', reason: m['reason'] as LiveViewEndReason, message: m['message'] as string } : undefined;
    case 'error':
      return str('code') && str('message') ? { type: 'error', code: m['code'] as string, message: m['message'] as string } : undefined;
    default:
      return undefined;
  }
}

/** Whether an `ended` reason is one the contract names (others are shown with the relay's message all the same). */
export function isKnownEndReason(reason: string): reason is LiveViewEndReason {
  return END_REASONS.includes(reason as LiveViewEndReason);
}

/**
 * The ticket answer, checked: a ticket of the contract's shape, of the mode asked
 * for, whose path is the stage's own live-view path. So the socket stays on the
 * console's own origin and on the stage the operator opened.
 */
export function parseTicket(value: unknown, expected: { runId: string; stageId: string; mode: LiveViewMode }): LiveViewTicket | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const t = value as Record<string, unknown>;
  if (typeof t['ticket'] !== 'string' || !LIVE_VIEW_TICKET_PATTERN.test(t['ticket'])) return undefined;
  if (t['mode'] !== expected.mode || typeof t['expiresAt'] !== 'string') return undefined;
  if (t['path'] !== liveViewPath(expected.runId, expected.stageId)) return undefined;
  return { ticket: t['ticket'], mode: expected.mode, expiresAt: t['expiresAt'], path: t['path'] };
}

/** `ws(s)://<this host><path>?ticket=…`. */
export function liveViewSocketUrl(ticket: LiveViewTicket, loc: Pick<Location, 'protocol' | 'host'>): string {
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}${ticket.path}?ticket=${encodeURIComponent(ticket.ticket)}`;
}
