import { applyLiveViewMessage, DIALOG_TIMEOUT_TEXT, frameArrived, initialLiveViewState } from './live-view.state';

describe('the live view state', () => {
  it('goes live on the first frame and keeps the page address', () => {
    let s = initialLiveViewState();
    s = applyLiveViewMessage(s, { type: 'url', url: 'https://example.com/login' });
    expect(s.phase).toBe('connecting');
    s = frameArrived(s);
    expect(s).toMatchObject({ phase: 'live', url: 'https://example.com/login', framesSeen: 1 });
  });

  it('shows confirm and prompt as a dialog; alert and beforeunload only as a notice', () => {
    let s = frameArrived(initialLiveViewState());
    s = applyLiveViewMessage(s, { type: 'dialog', dialogType: 'confirm', message: 'Leave?' });
    expect(s.dialog).toEqual({ type: 'dialog', dialogType: 'confirm', message: 'Leave?' });
    s = applyLiveViewMessage(s, { type: 'dialog-closed' });
    expect(s.dialog).toBeUndefined();
    s = applyLiveViewMessage(s, { type: 'dialog', dialogType: 'alert', message: 'Saved <b>ok</b>' });
    expect(s.dialog).toBeUndefined();
    expect(s.notice).toBe('The page showed an alert: Saved <b>ok</b>');
  });

  it('says so when the Host dismissed a dialog after its time-out', () => {
    let s = frameArrived(initialLiveViewState());
    s = applyLiveViewMessage(s, { type: 'dialog', dialogType: 'prompt', message: 'Code?', defaultPrompt: '' });
    s = applyLiveViewMessage(s, { type: 'dialog-closed', reason: 'timeout' });
    expect(s.dialog).toBeUndefined();
    expect(s.notice).toBe(DIALOG_TIMEOUT_TEXT);
    expect(DIALOG_TIMEOUT_TEXT).toBe('The page dialog was dismissed after waiting too long.');
  });

  it('follows popups, and ends or fails with a reason in words', () => {
    let s = frameArrived(initialLiveViewState());
    s = applyLiveViewMessage(s, { type: 'popup', following: true });
    expect(s.followingPopup).toBe(true);
    s = applyLiveViewMessage(s, { type: 'popup', following: false });
    expect(s.followingPopup).toBe(false);
    expect(applyLiveViewMessage(s, { type: 'error', code: 'cdp_lost', message: 'The tab is gone.' })).toMatchObject({ phase: 'failed', detail: 'The tab is gone. (cdp_lost)' });
    const ended = applyLiveViewMessage(s, { type: 'ended', reason: 'gate_answered' });
    expect(ended).toMatchObject({ phase: 'ended', detail: 'The live view closed: the gate was answered.' });
    expect(applyLiveViewMessage(ended, { type: 'ended', reason: 'something_new' }).detail).toBe('The live view closed (something_new).');
    // A frame after the end does not bring it back.
    expect(frameArrived(ended).phase).toBe('ended');
  });
});
