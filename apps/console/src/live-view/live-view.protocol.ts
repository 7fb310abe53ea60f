/**
 * The live-view wire protocol as the console speaks it.
 *
 * Written against the shape agreed for the live-view relay, whose contracts
 * (`libs/contracts/src/lib/live-view.ts`) are not merged yet: when they are,
 * these types should come from there and the parser below should check the
 * same rules. Everything the console knows about the protocol is in this
 * folder.
 *
 * - Ticket: `POST /api/runs/:run/stages/:stage/live-view/tickets` with
 *   `{mode}` answers `{ticket, expiresAt, path}`; the WebSocket opens on
 *   `path?ticket=…` on the console's own origin.
 * - Server → console: binary messages are JPEG frames; text messages are the
 *   JSON messages below.
 * - Console → server: the JSON messages below. Coordinates are CSS pixels of
 *   the frame (`deviceWidth` × `deviceHeight` of the last `frame-meta`).
 */

export type LiveViewMode = 'interactive' | 'view-only';

export interface LiveViewTicket {
  ticket: string;
  expiresAt: string;
  path: string;
}

export type DialogType = 'alert' | 'confirm' | 'prompt' | 'beforeunload';

export interface FrameMeta {
  type: 'frame-meta';
  deviceWidth: number;
  deviceHeight: number;
  offsetTop: number;
  pageScaleFactor: number;
}

export interface DialogMessage {
  type: 'dialog';
  dialogType: DialogType;
  message: string;
  defaultPrompt?: string;
  /** Who must answer (a view-only viewer sees it and cannot answer). */
  waitingFor?: string;
}

export type LiveViewServerMessage =
  | FrameMeta
  | { type: 'url'; url: string }
  | DialogMessage
  | { type: 'dialog-closed'; reason?: string }
  | { type: 'popup'; following: boolean }
  | { type: 'ended'; reason: string }
  | { type: 'error'; code: string; message: string };

export type MouseButton = 'left' | 'right' | 'middle';

export type LiveViewClientMessage =
  | { type: 'mouse'; action: 'down' | 'up' | 'move' | 'click' | 'dblclick'; x: number; y: number; button: MouseButton; modifiers: number }
  | { type: 'wheel'; x: number; y: number; deltaX: number; deltaY: number }
  | { type: 'key'; action: 'down' | 'up'; key: string; code: string; modifiers: number }
  | { type: 'text'; text: string }
  | { type: 'dialog'; accept: boolean; promptText?: string }
  | { type: 'reopen' };

const DIALOG_TYPES: readonly string[] = ['alert', 'confirm', 'prompt', 'beforeunload'];

/** A text message from the relay, checked before the view acts on it; undefined for anything else. */
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
  switch (m['type']) {
    case 'frame-meta':
      return num('deviceWidth') && num('deviceHeight') && (m['deviceWidth'] as number) > 0 && (m['deviceHeight'] as number) > 0
        ? {
            type: 'frame-meta',
            deviceWidth: m['deviceWidth'] as number,
            deviceHeight: m['deviceHeight'] as number,
            offsetTop: num('offsetTop') ? (m['offsetTop'] as number) : 0,
            pageScaleFactor: num('pageScaleFactor') ? (m['pageScaleFactor'] as number) : 1,
          }
        : undefined;
    case 'url':
      return str('url') ? { type: 'url', url: m['url'] as string } : undefined;
    case 'dialog':
      if (!DIALOG_TYPES.includes(m['dialogType'] as string) || !str('message') || !optStr('defaultPrompt') || !optStr('waitingFor')) return undefined;
      return {
        type: 'dialog',
        dialogType: m['dialogType'] as DialogType,
        message: m['message'] as string,
        ...(m['defaultPrompt'] !== undefined ? { defaultPrompt: m['defaultPrompt'] as string } : {}),
        ...(m['waitingFor'] !== undefined ? { waitingFor: m['waitingFor'] as string } : {}),
      };
    case 'dialog-closed':
      return optStr('reason') ? (m['reason'] === undefined ? { type: 'dialog-closed' } : { type: 'dialog-closed', reason: m['reason'] as string }) : undefined;
    case 'popup':
      return typeof m['following'] === 'boolean' ? { type: 'popup', following: m['following'] } : undefined;
    case 'ended':
      return str('reason') ? { type: 'ended', reason: m['reason'] as string } : undefined;
    case 'error':
      return str('code') && str('message') ? { type: 'error', code: m['code'] as string, message: m['message'] as string } : undefined;
    default:
      return undefined;
  }
}

/** The ticket answer, checked: the socket must stay on the console's own origin. */
export function parseTicket(value: unknown): LiveViewTicket | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const t = value as Record<string, unknown>;
  if (typeof t['ticket'] !== 'string' || !t['ticket'] || typeof t['path'] !== 'string' || typeof t['expiresAt'] !== 'string') return undefined;
  if (!t['path'].startsWith('/') || t['path'].startsWith('//') || /[\s\\?#]/.test(t['path'])) return undefined;
  return { ticket: t['ticket'], path: t['path'], expiresAt: t['expiresAt'] };
}

/** `ws://<this host><path>?ticket=…`. */
export function liveViewSocketUrl(ticket: LiveViewTicket, loc: Pick<Location, 'protocol' | 'host'>): string {
  return `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}${ticket.path}?ticket=${encodeURIComponent(ticket.ticket)}`;
}
