import type { DialogMessage, FrameMeta, LiveViewServerMessage } from './live-view.protocol';

export type LiveViewPhase =
  /** Asking for a ticket, opening the socket. */
  | 'connecting'
  /** Frames are flowing (or the page is idle). */
  | 'live'
  /** The server ended it (the gate was answered, the stage ended, …). */
  | 'ended'
  /** The socket closed without an `ended`: the operator may reconnect. */
  | 'disconnected'
  /** This api offers no live view (no ticket route). */
  | 'unavailable'
  /** The ticket was refused, or the server reported an error. */
  | 'failed';

export const DIALOG_TIMEOUT_TEXT = 'The page dialog was dismissed after waiting too long.';

export interface LiveViewState {
  phase: LiveViewPhase;
  /** The page address, as the relay last reported it. */
  url?: string;
  meta?: FrameMeta;
  /** The dialog open in the page now. */
  dialog?: DialogMessage;
  /** A line shown over the picture for a few seconds (a closed dialog, an auto-accepted alert). */
  notice?: string;
  /** The view follows a popup the page opened. */
  followingPopup: boolean;
  /** Why it ended, or what failed, in words. */
  detail?: string;
  framesSeen: number;
}

export function initialLiveViewState(): LiveViewState {
  return { phase: 'connecting', followingPopup: false, framesSeen: 0 };
}

/**
 * A relay message applied to the view's state. Pure; timers (hiding a
 * notice, clearing an alert) belong to the view.
 */
export function applyLiveViewMessage(state: LiveViewState, msg: LiveViewServerMessage): LiveViewState {
  switch (msg.type) {
    case 'frame-meta':
      return { ...state, meta: msg };
    case 'url':
      return { ...state, url: msg.url };
    case 'dialog':
      // alert and beforeunload are accepted by agent-browser within milliseconds:
      // they are shown as a notice, without buttons.
      if (msg.dialogType === 'alert' || msg.dialogType === 'beforeunload') {
        return { ...state, dialog: undefined, notice: dialogNotice(msg) };
      }
      return { ...state, dialog: msg, notice: undefined };
    case 'dialog-closed':
      return {
        ...state,
        dialog: undefined,
        notice: msg.reason === 'timeout' ? DIALOG_TIMEOUT_TEXT : state.notice,
      };
    case 'popup':
      return { ...state, followingPopup: msg.following };
    case 'ended':
      return { ...state, phase: 'ended', dialog: undefined, detail: endedText(msg.reason) };
    case 'error':
      return { ...state, phase: state.phase === 'ended' ? 'ended' : 'failed', detail: `${msg.message} (${msg.code})` };
  }
}

/** A frame arrived: the view is live. */
export function frameArrived(state: LiveViewState): LiveViewState {
  return { ...state, phase: state.phase === 'connecting' || state.phase === 'live' ? 'live' : state.phase, framesSeen: state.framesSeen + 1 };
}

function dialogNotice(msg: DialogMessage): string {
  const what = msg.dialogType === 'alert' ? 'The page showed an alert' : 'The page asked before leaving';
  return msg.message ? `${what}: ${msg.message}` : `${what}.`;
}

function endedText(reason: string): string {
  switch (reason) {
    case 'gate_answered':
      return 'The live view closed: the gate was answered.';
    case 'stage_ended':
      return 'The live view closed: the stage ended.';
    case 'run_ended':
      return 'The live view closed: the run ended.';
    case 'ticket_expired':
      return 'The live view closed: its ticket expired. Reconnect to get a new one.';
    default:
      return `The live view closed (${reason}).`;
  }
}
