import { ContractViolationError } from './errors';

/**
 * The live view: a browser stage's tab as a stream of JPEG pictures, and the
 * operator's clicks and keys back to it, over one WebSocket per viewer. The
 * console renders it; live-view-relay serves it; the api issues the tickets and
 * forwards the WebSocket. docs/live-view.md describes the protocol for people;
 * this file is its definition, and {@link parseLiveViewClientMessage} is the only
 * way a client message enters the relay.
 */

/** `interactive`: sees the page and may send input. `view-only`: sees the page; the relay refuses its input. */
export type LiveViewMode = 'interactive' | 'view-only';
export const LIVE_VIEW_MODES: readonly LiveViewMode[] = ['interactive', 'view-only'];

/** Bounds of the protocol; the relay, the api and the docs read the same numbers. */
export const LIVE_VIEW_LIMITS = {
  /** A ticket not used within this time is void. */
  ticketTtlSeconds: 60,
  /** Largest client frame; a bigger one closes the socket with 1009. */
  maxClientMessageBytes: 64 * 1024,
  /** Characters in one `text` message (a paste); longer pastes are several messages. */
  maxTextChars: 10_000,
  /** The relay types a paste in batches of this many characters (`Input.insertText`). */
  pasteBatchChars: 200,
  /** Characters of a prompt answer. */
  maxPromptChars: 10_000,
  /** Largest wheel delta on either axis, CSS pixels. */
  maxWheelDelta: 10_000,
  /** "Reopen browser tab" at most once per this interval per stage session. */
  reopenIntervalMs: 2000,
  /** Viewers of one stage at once (each costs a copy of every frame). */
  maxViewersPerStage: 8,
  /** Input messages per second one viewer may send; more are dropped with an `input_rate_limited` error. */
  maxInputPerSecond: 120,
  /** Frames are JPEG at this quality, at most this many pixels wide and high. */
  jpegQuality: 70,
  maxFrameSize: 1280,
  /** How long alert and beforeunload (accepted at once) stay on the overlay. */
  autoAcceptedOverlayMs: 4000,
} as const;

const ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A ticket: 256 random bits, base64url without padding (43 characters). */
export const LIVE_VIEW_TICKET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The gate's stable live-view address (no token in it). The WebSocket is this path
 * with `?ticket=<ticket>`; `POST <path>/tickets` issues the ticket.
 */
export function liveViewPath(runId: string, stageId: string): string {
  return `/api/runs/${runId}/stages/${stageId}/live-view`;
}

/** `{runId, stageId}` of a live-view WebSocket path, or `undefined` when the path is not one (or an id is malformed). */
export function parseLiveViewPath(pathname: string): { runId: string; stageId: string } | undefined {
  const match = /^\/api\/runs\/([^/]+)\/stages\/([^/]+)\/live-view$/.exec(pathname);
  if (!match || !ID.test(match[1]) || !ID.test(match[2])) return undefined;
  return { runId: match[1], stageId: match[2] };
}

/** `POST /api/runs/:run/stages/:stage/live-view/tickets` body. */
export interface LiveViewTicketRequest {
  /** @defaultValue `interactive` */
  mode?: LiveViewMode;
}

/** The answer to a ticket request: connect to `path?ticket=<ticket>` before `expiresAt`, once. */
export interface LiveViewTicket {
  ticket: string;
  mode: LiveViewMode;
  /** ISO 8601. */
  expiresAt: string;
  /** The WebSocket path (same as the gate's stable path). */
  path: string;
}

/** A ticket as stored (under its digest): what it lets its holder see, until when. */
export interface LiveViewTicketRecord {
  runId: string;
  stageId: string;
  attempt: number;
  /** The stage session (browser-host) the ticket was issued for; another attempt's session is another view. */
  sessionId: string;
  mode: LiveViewMode;
  /** ISO 8601. */
  issuedAt: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** Validates a stored ticket record (the relay reads what the api wrote). */
export function parseLiveViewTicketRecord(raw: unknown): LiveViewTicketRecord {
  const r = asObject(raw, 'live-view ticket record');
  const problems = unknownFields(r, ['runId', 'stageId', 'attempt', 'sessionId', 'mode', 'issuedAt', 'expiresAt']);
  if (typeof r['runId'] !== 'string' || !ID.test(r['runId'])) problems.push('runId must be an id');
  if (typeof r['stageId'] !== 'string' || !ID.test(r['stageId'])) problems.push('stageId must be an id');
  if (typeof r['sessionId'] !== 'string' || !ID.test(r['sessionId'])) problems.push('sessionId must be an id');
  if (!isInt(r['attempt'], 1, Number.MAX_SAFE_INTEGER)) problems.push('attempt must be a positive integer');
  if (!LIVE_VIEW_MODES.includes(r['mode'] as LiveViewMode)) problems.push(`mode must be one of ${LIVE_VIEW_MODES.join(', ')}`);
  for (const key of ['issuedAt', 'expiresAt']) {
    if (typeof r[key] !== 'string' || Number.isNaN(Date.parse(r[key] as string))) problems.push(`${key} must be an ISO 8601 time`);
  }
  if (problems.length) throw new ContractViolationError('live-view ticket record', problems);
  return r as unknown as LiveViewTicketRecord;
}

// ---------------------------------------------------------------------------
// Client → relay: JSON text frames. Coordinates are fractions (0..1) of the
// picture's width and height as the viewer shows it; the relay maps them to the
// page through the frame metadata.
// ---------------------------------------------------------------------------

export type LiveViewModifier = 'Alt' | 'Control' | 'Meta' | 'Shift';
export const LIVE_VIEW_MODIFIERS: readonly LiveViewModifier[] = ['Alt', 'Control', 'Meta', 'Shift'];
export type LiveViewMouseButton = 'left' | 'middle' | 'right';

/**
 * `click`: press and release (`clicks: 2` is a double click, sent as the two
 * clicks a person makes). `down`/`up`/`move`: for dragging and hovering.
 */
export interface LiveViewMouseMessage {
  type: 'mouse';
  action: 'click' | 'down' | 'up' | 'move';
  x: number;
  y: number;
  /** @defaultValue `left` (ignored for `move`) */
  button?: LiveViewMouseButton;
  /** `click`: 1 or 2 (double). `down`/`up`: the press's click count, 1 to 3. @defaultValue 1 */
  clicks?: number;
  modifiers?: LiveViewModifier[];
}

/** The mouse wheel at a point; deltas in CSS pixels (positive = down / right). */
export interface LiveViewWheelMessage {
  type: 'wheel';
  x: number;
  y: number;
  deltaX: number;
  deltaY: number;
  modifiers?: LiveViewModifier[];
}

/**
 * A key, by its DOM `KeyboardEvent.key`: one of {@link LIVE_VIEW_NAMED_KEYS}, or one
 * printable character (typing). `press` = down then up.
 */
export interface LiveViewKeyMessage {
  type: 'key';
  action: 'down' | 'up' | 'press';
  key: string;
  modifiers?: LiveViewModifier[];
}

/** Text to insert where the focus is (a paste), 1 to {@link LIVE_VIEW_LIMITS.maxTextChars} characters. */
export interface LiveViewTextMessage {
  type: 'text';
  text: string;
}

/**
 * Answers the page dialog `id` (from a `dialog` message). `promptText` only for a
 * prompt; left out, Accept sends the page's default text. An answer to a dialog that
 * is no longer open is ignored without an error.
 */
export interface LiveViewDialogAnswerMessage {
  type: 'dialog';
  id: number;
  action: 'accept' | 'dismiss';
  promptText?: string;
}

/** "Reopen browser tab": the same address in a fresh tab of the same browser; at most once per 2 s. */
export interface LiveViewReopenMessage {
  type: 'reopen';
}

export type LiveViewClientMessage =
  | LiveViewMouseMessage
  | LiveViewWheelMessage
  | LiveViewKeyMessage
  | LiveViewTextMessage
  | LiveViewDialogAnswerMessage
  | LiveViewReopenMessage;

/** Keys with a name (everything else is one printable character). */
export const LIVE_VIEW_NAMED_KEYS = [
  'Enter',
  'Tab',
  'Backspace',
  'Delete',
  'Escape',
  'ArrowUp',
  'ArrowDown',
  'ArrowLeft',
  'ArrowRight',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'Shift',
  'Control',
  'Alt',
  'Meta',
] as const;

export type LiveViewParseResult =
  | { ok: true; message: LiveViewClientMessage }
  | { ok: false; code: 'invalid_json' | 'invalid_message'; message: string };

const CLIENT_FIELDS: Record<LiveViewClientMessage['type'], readonly string[]> = {
  mouse: ['type', 'action', 'x', 'y', 'button', 'clicks', 'modifiers'],
  wheel: ['type', 'x', 'y', 'deltaX', 'deltaY', 'modifiers'],
  key: ['type', 'action', 'key', 'modifiers'],
  text: ['type', 'text'],
  dialog: ['type', 'id', 'action', 'promptText'],
  reopen: ['type'],
};

/**
 * Validates one client frame. Binary frames, unknown types, unknown fields and
 * out-of-range values are refused with a message that names the field and what is
 * allowed; nothing is coerced.
 */
export function parseLiveViewClientMessage(data: string | Uint8Array, isBinary = false): LiveViewParseResult {
  if (isBinary) return invalid('binary frames are not accepted: send JSON text frames');
  let raw: unknown;
  try {
    raw = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
  } catch {
    return { ok: false, code: 'invalid_json', message: 'the frame is not JSON: send one JSON object per text frame' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return invalid('expected one JSON object');
  const r = raw as Record<string, unknown>;
  const type = r['type'];
  if (typeof type !== 'string' || !Object.hasOwn(CLIENT_FIELDS, type)) {
    return invalid(`"type" must be one of ${Object.keys(CLIENT_FIELDS).join(', ')}`);
  }
  const problems = unknownFields(r, CLIENT_FIELDS[type as LiveViewClientMessage['type']]);
  switch (type) {
    case 'mouse': {
      if (!['click', 'down', 'up', 'move'].includes(r['action'] as string)) problems.push('"action" must be click, down, up or move');
      checkPoint(r, problems);
      if (r['button'] !== undefined && !['left', 'middle', 'right'].includes(r['button'] as string)) {
        problems.push('"button" must be left, middle or right');
      }
      if (r['clicks'] !== undefined) {
        const max = r['action'] === 'click' ? 2 : 3;
        if (!isInt(r['clicks'], 1, max)) problems.push(`"clicks" must be an integer from 1 to ${max}`);
      }
      checkModifiers(r, problems);
      break;
    }
    case 'wheel': {
      checkPoint(r, problems);
      for (const key of ['deltaX', 'deltaY']) {
        const v = r[key];
        if (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > LIVE_VIEW_LIMITS.maxWheelDelta) {
          problems.push(`"${key}" must be a number from -${LIVE_VIEW_LIMITS.maxWheelDelta} to ${LIVE_VIEW_LIMITS.maxWheelDelta}`);
        }
      }
      checkModifiers(r, problems);
      break;
    }
    case 'key': {
      if (!['down', 'up', 'press'].includes(r['action'] as string)) problems.push('"action" must be down, up or press');
      if (!isLiveViewKey(r['key'])) {
        problems.push(`"key" must be one printable character or one of ${LIVE_VIEW_NAMED_KEYS.join(', ')}`);
      }
      checkModifiers(r, problems);
      break;
    }
    case 'text': {
      const text = r['text'];
      if (typeof text !== 'string' || text.length === 0 || text.length > LIVE_VIEW_LIMITS.maxTextChars) {
        problems.push(`"text" must be a string of 1 to ${LIVE_VIEW_LIMITS.maxTextChars} characters (send a longer paste as several messages)`);
      }
      break;
    }
    case 'dialog': {
      if (!isInt(r['id'], 1, Number.MAX_SAFE_INTEGER)) problems.push('"id" must be the positive integer id of a dialog message');
      if (!['accept', 'dismiss'].includes(r['action'] as string)) problems.push('"action" must be accept or dismiss');
      const text = r['promptText'];
      if (text !== undefined && (typeof text !== 'string' || text.length > LIVE_VIEW_LIMITS.maxPromptChars)) {
        problems.push(`"promptText" must be a string of at most ${LIVE_VIEW_LIMITS.maxPromptChars} characters`);
      }
      break;
    }
    case 'reopen':
      break;
  }
  if (problems.length) return invalid(problems.join('; '));
  return { ok: true, message: r as unknown as LiveViewClientMessage };
}

/** A named key, or exactly one printable character (one code point, not a control character). */
export function isLiveViewKey(key: unknown): key is string {
  if (typeof key !== 'string') return false;
  if ((LIVE_VIEW_NAMED_KEYS as readonly string[]).includes(key)) return true;
  const chars = [...key];
  return chars.length === 1 && !/\p{Cc}|\p{Cs}/u.test(key);
}

// ---------------------------------------------------------------------------
// Relay → client: binary frames are JPEG pictures; text frames are JSON.
// ---------------------------------------------------------------------------

/** First message on every connection. */
export interface LiveViewReadyMessage {
  type: 'ready';
  mode: LiveViewMode;
  runId: string;
  stageId: string;
  attempt: number;
  /** The address of the page shown. */
  url: string;
  /** How long a confirm or prompt waits for an answer before the Host dismisses it. */
  dialogTimeoutSeconds: number;
}

/**
 * Describes the binary (JPEG) frames that follow it, until the next `frame-meta`:
 * sent before the first frame and whenever the page's geometry changes. The
 * picture shows `deviceWidth × deviceHeight` device-independent pixels.
 */
export interface LiveViewFrameMetaMessage {
  type: 'frame-meta';
  deviceWidth: number;
  deviceHeight: number;
  offsetTop: number;
  pageScaleFactor: number;
  scrollOffsetX: number;
  scrollOffsetY: number;
}

/** The shown page's address changed (navigation, popup, reopen). Plain text. */
export interface LiveViewUrlMessage {
  type: 'url';
  url: string;
}

/**
 * The view followed a popup (`opened`) or returned to the page that opened it
 * (`closed`). `depth` is how many popups deep the view now is (0 = the stage's tab).
 */
export interface LiveViewPopupMessage {
  type: 'popup';
  action: 'opened' | 'closed';
  url: string;
  depth: number;
}

export type LiveViewDialogKind = 'alert' | 'confirm' | 'prompt' | 'beforeunload';

/**
 * A page dialog, to draw over the last picture as plain text (never HTML).
 * `canAnswer` is true only for an interactive viewer and a confirm or prompt; alert
 * and beforeunload are accepted at once (`autoAccepted`) and shown for a few seconds.
 * Sent again with the same `id` when something about it changes.
 */
export interface LiveViewDialogMessage {
  type: 'dialog';
  id: number;
  kind: LiveViewDialogKind;
  message: string;
  /** A prompt's default text (Accept without editing sends it). */
  defaultPrompt?: string;
  /** The address of the page that opened it. */
  url: string;
  canAnswer: boolean;
  /** Whom it waits for: `operator` (someone with an interactive live view), or `nobody` (accepted already). */
  waitsFor: 'operator' | 'nobody';
  autoAccepted: boolean;
  /** ISO 8601: when the Host dismisses it if nobody answered (confirm and prompt). */
  timeoutAt?: string;
}

/**
 * The dialog is gone. `answered-elsewhere`: the page's agent or someone at the Host's
 * own browser answered it. `timed-out`: the Host dismissed it; `message` says so.
 */
export interface LiveViewDialogClosedMessage {
  type: 'dialog-closed';
  id: number;
  outcome: 'accepted' | 'dismissed' | 'timed-out' | 'answered-elsewhere';
  message?: string;
}

/** The view moved to a fresh tab of the same browser ("Reopen browser tab"). */
export interface LiveViewReopenedMessage {
  type: 'reopened';
  url: string;
}

export type LiveViewEndReason =
  | 'gate-answered'
  | 'stage-ended'
  | 'run-ended'
  | 'tab-closed'
  | 'browser-gone'
  | 'relay-stopping';

/** The last message: the view is over (the socket closes with {@link LIVE_VIEW_CLOSE_CODES.ended}). */
export interface LiveViewEndedMessage {
  type: 'ended';
  reason: LiveViewEndReason;
  message: string;
}

/**
 * A message was refused or an action failed; the socket stays open. Codes:
 * `invalid_json`, `invalid_message`, `input_refused` (view-only), `input_rate_limited`,
 * `dialog_open` (answer the dialog first), `reopen_too_soon`, `reopen_failed`,
 * `input_failed`.
 */
export interface LiveViewErrorMessage {
  type: 'error';
  code: string;
  message: string;
}

export type LiveViewServerMessage =
  | LiveViewReadyMessage
  | LiveViewFrameMetaMessage
  | LiveViewUrlMessage
  | LiveViewPopupMessage
  | LiveViewDialogMessage
  | LiveViewDialogClosedMessage
  | LiveViewReopenedMessage
  | LiveViewEndedMessage
  | LiveViewErrorMessage;

/** WebSocket close codes the relay uses. */
export const LIVE_VIEW_CLOSE_CODES = {
  /** The view ended (gate answered, stage or run ended, tab closed); an `ended` message came first. */
  ended: 4000,
  /** The relay is shutting down. */
  goingAway: 1001,
  /** Too many invalid messages, or no pong to the relay's ping. */
  policyViolation: 1008,
  /** A frame over {@link LIVE_VIEW_LIMITS.maxClientMessageBytes}. */
  tooBig: 1009,
} as const;

/** The overlay text when the Host dismissed a dialog nobody answered (the spec's wording). */
export const DIALOG_TIMED_OUT_TEXT = 'The page dialog was dismissed after waiting too long.';

function invalid(message: string): LiveViewParseResult {
  return { ok: false, code: 'invalid_message', message };
}

function asObject(raw: unknown, what: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ContractViolationError(what, ['expected an object']);
  return raw as Record<string, unknown>;
}

function unknownFields(r: Record<string, unknown>, allowed: readonly string[]): string[] {
  return Object.keys(r)
    .filter((key) => !allowed.includes(key))
    .map((key) => `unknown field "${key.slice(0, 64)}"`);
}

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function checkPoint(r: Record<string, unknown>, problems: string[]): void {
  for (const key of ['x', 'y']) {
    const v = r[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) {
      problems.push(`"${key}" must be a number from 0 to 1 (a fraction of the picture's ${key === 'x' ? 'width' : 'height'})`);
    }
  }
}

function checkModifiers(r: Record<string, unknown>, problems: string[]): void {
  const m = r['modifiers'];
  if (m === undefined) return;
  if (!Array.isArray(m) || m.length > 4 || m.some((k) => !LIVE_VIEW_MODIFIERS.includes(k as LiveViewModifier))) {
    problems.push(`"modifiers" must be a list of ${LIVE_VIEW_MODIFIERS.join(', ')}`);
  }
}
