import {
  DIALOG_TIMED_OUT_TEXT,
  LIVE_VIEW_LIMITS,
  type LiveViewDialogClosedMessage,
  type LiveViewDialogKind,
} from '@stageflow/contracts';

/** `Page.javascriptDialogOpening`, as the tracker needs it. */
export interface DialogOpening {
  type: LiveViewDialogKind;
  message: string;
  defaultPrompt?: string;
  url: string;
}

/** A dialog as viewers are shown it (the per-viewer parts, `canAnswer`, are added when sent). */
export interface ShownDialog {
  id: number;
  kind: LiveViewDialogKind;
  message: string;
  defaultPrompt?: string;
  url: string;
  autoAccepted: boolean;
  /** ISO 8601, confirm and prompt only. */
  timeoutAt?: string;
}

/** What the tracker does to the world: answer a dialog over CDP, tell viewers, keep time. */
export interface DialogPorts {
  /** `Page.handleJavaScriptDialog` on the page's session. A rejection (already answered) is expected and ignored. */
  answer(sessionId: string, accept: boolean, promptText?: string): Promise<void>;
  show(dialog: ShownDialog): void;
  /** The dialog is gone (`sessionId`: the page it was on). */
  closed(message: LiveViewDialogClosedMessage, sessionId: string): void;
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

interface OpenDialog extends ShownDialog {
  sessionId: string;
  /** What the relay asked for, if anything: a viewer's answer, or the time-out's dismissal. */
  answering?: 'accept' | 'dismiss' | 'timeout';
  timer?: unknown;
  /** The page closed it; an auto-accepted one stays on the overlay a few seconds more. */
  closedByPage?: boolean;
}

export type AnswerOutcome = 'sent' | 'ignored';

/**
 * The page dialogs of one stage view (its tab and popups; at most one per page).
 *
 * - alert, beforeunload: accepted at once (agent-browser may beat us to it; either
 *   way) and shown for {@link LIVE_VIEW_LIMITS.autoAcceptedOverlayMs} without buttons.
 * - confirm, prompt: wait for an interactive viewer; a prompt accepted without text
 *   sends the page's default. Nobody answers within the time-out: dismissed, and the
 *   overlay says {@link DIALOG_TIMED_OUT_TEXT}. The stage goes on.
 * - An answer to a dialog that is gone, or already being answered, is ignored
 *   without an error: the page, its agent or another viewer was first.
 */
export class DialogTracker {
  private nextId = 1;
  private readonly open = new Map<string, OpenDialog>();

  constructor(
    private readonly ports: DialogPorts,
    private readonly timeoutSeconds: number,
    private readonly autoAcceptedOverlayMs: number = LIVE_VIEW_LIMITS.autoAcceptedOverlayMs,
  ) {}

  opened(sessionId: string, event: DialogOpening): ShownDialog {
    this.closeQuietly(sessionId);
    const autoAccepted = event.type === 'alert' || event.type === 'beforeunload';
    const dialog: OpenDialog = {
      id: this.nextId++,
      kind: event.type,
      message: event.message,
      url: event.url,
      autoAccepted,
      sessionId,
      ...(event.type === 'prompt' ? { defaultPrompt: event.defaultPrompt ?? '' } : {}),
    };
    if (autoAccepted) {
      dialog.answering = 'accept';
    } else {
      dialog.timeoutAt = new Date(this.ports.now() + this.timeoutSeconds * 1000).toISOString();
      dialog.timer = this.ports.setTimer(() => this.timedOut(dialog), this.timeoutSeconds * 1000);
    }
    this.open.set(sessionId, dialog);
    this.ports.show(shown(dialog));
    if (autoAccepted) void this.ports.answer(sessionId, true).catch(() => undefined);
    return shown(dialog);
  }

  /** An interactive viewer's answer (the caller has refused view-only ones). */
  answer(id: number, action: 'accept' | 'dismiss', promptText?: string): AnswerOutcome {
    const dialog = [...this.open.values()].find((d) => d.id === id);
    if (!dialog || dialog.autoAccepted || dialog.answering || dialog.closedByPage) return 'ignored';
    dialog.answering = action;
    const accept = action === 'accept';
    const text = dialog.kind === 'prompt' && accept ? (promptText ?? dialog.defaultPrompt ?? '') : undefined;
    this.ports.answer(dialog.sessionId, accept, text).catch(() => {
      // The page or its agent answered first; the closed event tells viewers. Should it
      // still be open (the call itself failed), let the next answer try again.
      if (this.open.get(dialog.sessionId) === dialog && !dialog.closedByPage) dialog.answering = undefined;
    });
    return 'sent';
  }

  /** `Page.javascriptDialogClosed` on a page's session. */
  pageClosed(sessionId: string, result: boolean): void {
    const dialog = this.open.get(sessionId);
    if (!dialog || dialog.closedByPage) return;
    dialog.closedByPage = true;
    this.ports.clearTimer(dialog.timer);
    if (dialog.autoAccepted) {
      // Shown a few seconds more so a person can read it; the page goes on meanwhile.
      dialog.timer = this.ports.setTimer(() => this.finish(dialog, { outcome: 'accepted' }), this.autoAcceptedOverlayMs);
      return;
    }
    if (dialog.answering === 'timeout') this.finish(dialog, { outcome: 'timed-out', message: DIALOG_TIMED_OUT_TEXT });
    else if (dialog.answering) this.finish(dialog, { outcome: result ? 'accepted' : 'dismissed' });
    else this.finish(dialog, { outcome: 'answered-elsewhere' });
  }

  /** The page went away (popup closed, tab reopened) with a dialog open: it is gone with it. */
  pageGone(sessionId: string): void {
    const dialog = this.open.get(sessionId);
    if (!dialog) return;
    this.ports.clearTimer(dialog.timer);
    this.finish(dialog, { outcome: dialog.autoAccepted ? 'accepted' : 'dismissed' });
  }

  /** Whether a dialog blocks this page (its input would wait behind it). */
  blocks(sessionId: string): boolean {
    const dialog = this.open.get(sessionId);
    return dialog !== undefined && !dialog.closedByPage;
  }

  /** What a viewer joining now must see. */
  current(): ShownDialog[] {
    return [...this.open.values()].map(shown);
  }

  dispose(): void {
    for (const dialog of this.open.values()) this.ports.clearTimer(dialog.timer);
    this.open.clear();
  }

  private timedOut(dialog: OpenDialog): void {
    if (this.open.get(dialog.sessionId) !== dialog || dialog.closedByPage) return;
    // A viewer's answer still on its way wins; otherwise the Host dismisses it.
    if (dialog.answering) return;
    dialog.answering = 'timeout';
    this.ports.answer(dialog.sessionId, false).catch(() => undefined);
  }

  private finish(dialog: OpenDialog, closed: Omit<LiveViewDialogClosedMessage, 'type' | 'id'>): void {
    if (this.open.get(dialog.sessionId) !== dialog) return;
    this.open.delete(dialog.sessionId);
    this.ports.closed({ type: 'dialog-closed', id: dialog.id, ...closed }, dialog.sessionId);
  }

  /** A new dialog on a page whose last one never reported closing (its events were lost): that one is over. */
  private closeQuietly(sessionId: string): void {
    const previous = this.open.get(sessionId);
    if (!previous) return;
    this.ports.clearTimer(previous.timer);
    this.finish(previous, { outcome: previous.autoAccepted ? 'accepted' : 'answered-elsewhere' });
  }
}

function shown(dialog: OpenDialog): ShownDialog {
  const { id, kind, message, defaultPrompt, url, autoAccepted, timeoutAt } = dialog;
  return {
    id,
    kind,
    message,
    url,
    autoAccepted,
    ...(defaultPrompt !== undefined ? { defaultPrompt } : {}),
    ...(timeoutAt !== undefined ? { timeoutAt } : {}),
  };
}
