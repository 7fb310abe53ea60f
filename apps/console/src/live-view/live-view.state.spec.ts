import type { LiveViewDialogMessage } from '@stageflow/contracts';
import { applyLiveViewMessage, closedByConsole, DIALOG_TIMED_OUT_TEXT, frameArrived, initialLiveViewState } from './live-view.state';

const confirmDialog: LiveViewDialogMessage = { type: 'dialog', id: 3, kind: 'confirm', message: 'Leave?', url: 'u', canAnswer: true, waitsFor: 'operator', autoAccepted: false };
const ready = { type: 'ready', mode: 'interactive', runId: 'r', stageId: 'login', attempt: 1, url: 'https://example.com/login', dialogTimeoutSeconds: 60 } as const;

describe('the live view state', () => {
  it('goes live on ready with the page address; pictures are counted', () => {
    let s = initialLiveViewState();
    expect(s.phase).toBe('connecting');
    s = applyLiveViewMessage(s, ready);
    expect(s).toMatchObject({ phase: 'live', url: 'https://example.com/login', framesSeen: 0 });
    s = applyLiveViewMessage(frameArrived(s), { type: 'url', url: 'https://example.com/account' });
    expect(s).toMatchObject({ url: 'https://example.com/account', framesSeen: 1 });
  });

  it('shows a dialog until its own dialog-closed; a timed-out one leaves the spec\'s sentence', () => {
    let s = applyLiveViewMessage(initialLiveViewState(), ready);
    s = applyLiveViewMessage(s, confirmDialog);
    expect(s.dialog).toEqual(confirmDialog);
    // An older dialog's end does not hide this one.
    s = applyLiveViewMessage(s, { type: 'dialog-closed', id: 2, outcome: 'accepted' });
    expect(s.dialog).toEqual(confirmDialog);
    s = applyLiveViewMessage(s, { type: 'dialog-closed', id: 3, outcome: 'timed-out', message: DIALOG_TIMED_OUT_TEXT });
    expect(s.dialog).toBeUndefined();
    expect(s.notice).toBe('The page dialog was dismissed after waiting too long.');
    s = applyLiveViewMessage(s, { ...confirmDialog, id: 4, kind: 'alert', autoAccepted: true, canAnswer: false, waitsFor: 'nobody', message: 'Saved <b>ok</b>' });
    expect(s.dialog).toMatchObject({ id: 4, autoAccepted: true, message: 'Saved <b>ok</b>' });
    expect(applyLiveViewMessage(s, { type: 'dialog-closed', id: 4, outcome: 'accepted' }).dialog).toBeUndefined();
  });

  it('follows popups and says when the view is back on the opener; a reopen moves it to a fresh tab', () => {
    let s = applyLiveViewMessage(initialLiveViewState(), ready);
    s = applyLiveViewMessage(s, { type: 'popup', action: 'opened', url: '', depth: 1 });
    expect(s).toMatchObject({ popupDepth: 1, popupUrl: undefined });
    s = applyLiveViewMessage(s, { type: 'url', url: 'https://idp.example/' });
    expect(s).toMatchObject({ popupDepth: 1, popupUrl: 'https://idp.example/', url: 'https://idp.example/' });
    s = applyLiveViewMessage(s, { type: 'popup', action: 'closed', url: 'https://example.com/login', depth: 0 });
    expect(s).toMatchObject({ popupDepth: 0, popupUrl: undefined, notice: 'The popup closed: the view is back on the page that opened it.' });
    s = applyLiveViewMessage(applyLiveViewMessage(s, confirmDialog), { type: 'reopened', url: 'https://example.com/login' });
    expect(s).toMatchObject({ dialog: undefined, url: 'https://example.com/login', notice: 'The view moved to a fresh tab of the same browser.' });
  });

  it('shows errors without ending the view; ends with the relay\'s message and stays ended', () => {
    let s = applyLiveViewMessage(initialLiveViewState(), ready);
    s = applyLiveViewMessage(s, { type: 'error', code: 'reopen_too_soon', message: 'Wait a moment.' });
    expect(s).toMatchObject({ phase: 'live', error: { code: 'reopen_too_soon', message: 'Wait a moment.' } });
    const ended = applyLiveViewMessage(applyLiveViewMessage(s, confirmDialog), { type: 'ended', reason: 'gate-answered', message: 'The gate was answered, so this live view is closed.' });
    expect(ended).toMatchObject({ phase: 'ended', dialog: undefined, endReason: 'gate-answered', detail: 'The gate was answered, so this live view is closed.' });
    expect(applyLiveViewMessage(ended, confirmDialog)).toBe(ended);
    expect(applyLiveViewMessage(s, { type: 'ended', reason: 'something-new' as never, message: '' }).detail).toBe('The live view closed (something-new).');
    expect(closedByConsole(s, 'The gate was accepted.')).toMatchObject({ phase: 'ended', endReason: 'closed', detail: 'The gate was accepted.' });
    expect(closedByConsole(ended, 'later')).toBe(ended);
    // The stage's tab closes as the stage ends; the relay may tell that first.
    const tabClosed = applyLiveViewMessage(s, { type: 'ended', reason: 'tab-closed', message: "The stage's tab was closed." });
    expect(tabClosed.detail).toBe("The stage's tab was closed.");
    expect(closedByConsole(tabClosed, 'The stage has ended, so its live view is closed.')).toMatchObject({ phase: 'ended', detail: 'The stage has ended, so its live view is closed.' });
  });
});
