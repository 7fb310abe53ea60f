import { DIALOG_TIMED_OUT_TEXT, type LiveViewDialogMessage, type LiveViewFrameMetaMessage, type LiveViewServerMessage } from '@stageflow/contracts';
import { isKnownEndReason } from './live-view.protocol';

export type LiveViewPhase =
  /** Asking for a ticket, opening the socket. */
  | 'connecting'
  /** The relay said `ready`: pictures flow (or the page is idle). */
  | 'live'
  /** The view is over: the relay ended it (gate answered, stage or run ended, …) or the console closed it. */
  | 'ended'
  /** The socket closed without an `ended`: the operator may reconnect. */
  | 'disconnected'
  /** This api offers no live view (no ticket route). */
  | 'unavailable'
  /** The ticket or the socket was refused. */
  | 'failed';

export { DIALOG_TIMED_OUT_TEXT };

export interface LiveViewState {
  phase: LiveViewPhase;
  /** The address of the page shown, as the relay last reported it. */
  url?: string;
  meta?: LiveViewFrameMetaMessage;
  /** The page dialog shown over the picture (an auto-accepted one too, without buttons). */
  dialog?: LiveViewDialogMessage;
  /** A line shown over the picture for a few seconds (a timed-out dialog, a closed popup, a reopened tab). */
  notice?: string;
  /** The last error the relay reported; shown for a few seconds, the view goes on. */
  error?: { code: string; message: string };
  /** How many popups deep the view is (0: the stage's own tab), and the popup's address. */
  popupDepth: number;
  popupUrl?: string;
  /** Why it ended, or what failed, in words. */
  detail?: string;
  /** The relay's `ended` reason (or `closed` when the console closed it). */
  endReason?: string;
  framesSeen: number;
}

export function initialLiveViewState(): LiveViewState {
  return { phase: 'connecting', popupDepth: 0, framesSeen: 0 };
}

/**
 * A relay message applied to the view's state. Pure; timers (hiding a
 * notice or an error) belong to the view.
 */
export function applyLiveViewMessage(state: LiveViewState, msg: LiveViewServerMessage): LiveViewState {
  if (state.phase === 'ended') return state;
  switch (msg.type) {
    case 'ready':
      return { ...state, phase: 'live', url: msg.url };
    case 'frame-meta':
      return { ...state, meta: msg };
    case 'url':
      // A popup is often announced before it has loaded its address: the view's next address is the popup's.
      return { ...state, url: msg.url, popupUrl: state.popupDepth > 0 ? msg.url : state.popupUrl };
    case 'popup':
      return msg.action === 'opened'
        ? { ...state, popupDepth: msg.depth, popupUrl: msg.url || undefined, notice: undefined }
        : {
            ...state,
            popupDepth: msg.depth,
            popupUrl: msg.depth > 0 ? msg.url : undefined,
            notice: msg.depth > 0 ? undefined : 'The popup closed: the view is back on the page that opened it.',
          };
    case 'dialog':
      return { ...state, dialog: msg, notice: undefined };
    case 'dialog-closed':
      if (state.dialog?.id !== msg.id) return msg.outcome === 'timed-out' ? { ...state, notice: msg.message ?? DIALOG_TIMED_OUT_TEXT } : state;
      return { ...state, dialog: undefined, notice: msg.outcome === 'timed-out' ? (msg.message ?? DIALOG_TIMED_OUT_TEXT) : state.notice };
    case 'reopened':
      return {
        ...state,
        url: msg.url,
        dialog: undefined,
        popupDepth: 0,
        popupUrl: undefined,
        notice: 'The view moved to a fresh tab of the same browser.',
      };
    case 'ended':
      return { ...state, phase: 'ended', dialog: undefined, endReason: msg.reason, detail: endedText(msg.reason, msg.message) };
    case 'error':
      return { ...state, error: { code: msg.code, message: msg.message } };
  }
}

/** A picture arrived. */
export function frameArrived(state: LiveViewState): LiveViewState {
  return { ...state, framesSeen: state.framesSeen + 1 };
}

/**
 * The console closed the view itself (the gate was answered here, the stage ended).
 * A view the relay ended already keeps the relay's words, except `tab-closed`:
 * browser-host closes a stage's tab as the stage ends and the relay may see the
 * tab go before the stage's end, and the console's reason is then the truer one.
 */
export function closedByConsole(state: LiveViewState, detail: string): LiveViewState {
  if (state.phase === 'ended') return state.endReason === 'tab-closed' ? { ...state, detail } : state;
  return { ...state, phase: 'ended', dialog: undefined, endReason: 'closed', detail };
}

/**
 * The relay's message is written for people; it is shown as it is. An empty
 * one, or a reason this console does not know, still says the view closed.
 */
function endedText(reason: string, message: string): string {
  if (message.trim()) return message;
  return isKnownEndReason(reason) ? `The live view closed (${reason.replace('-', ' ')}).` : `The live view closed (${reason}).`;
}
