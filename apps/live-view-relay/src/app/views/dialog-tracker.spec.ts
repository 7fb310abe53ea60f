import { DIALOG_TIMED_OUT_TEXT, type LiveViewDialogClosedMessage } from '@stageflow/contracts';
import { DialogTracker, type DialogPorts, type ShownDialog } from './dialog-tracker';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

function setup(timeoutSeconds = 60) {
  const answers: Array<{ sessionId: string; accept: boolean; promptText?: string }> = [];
  const shown: ShownDialog[] = [];
  const closed: LiveViewDialogClosedMessage[] = [];
  let answerFails = false;
  const ports: DialogPorts = {
    answer: async (sessionId, accept, promptText) => {
      answers.push(promptText === undefined ? { sessionId, accept } : { sessionId, accept, promptText });
      if (answerFails) throw new Error('No dialog is showing');
    },
    show: (d) => shown.push(d),
    closed: (m) => closed.push(m),
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  };
  const tracker = new DialogTracker(ports, timeoutSeconds, 4000);
  return { tracker, answers, shown, closed, failAnswers: () => (answerFails = true) };
}

const flush = () => Promise.resolve().then(() => undefined);

beforeEach(() => jest.useFakeTimers({ now: T0 }));
afterEach(() => jest.useRealTimers());

describe('DialogTracker', () => {
  it('shows a confirm to viewers and sends the interactive viewer\'s answer', async () => {
    const { tracker, answers, shown, closed } = setup();
    const dialog = tracker.opened('S1', { type: 'confirm', message: 'Leave <b>now</b>?', url: 'http://x/' });
    expect(shown).toEqual([{ id: 1, kind: 'confirm', message: 'Leave <b>now</b>?', url: 'http://x/', autoAccepted: false, timeoutAt: '2026-03-01T10:01:00.000Z' }]);
    expect(tracker.blocks('S1')).toBe(true);

    expect(tracker.answer(dialog.id, 'accept')).toBe('sent');
    await flush();
    expect(answers).toEqual([{ sessionId: 'S1', accept: true }]);
    tracker.pageClosed('S1', true);
    expect(closed).toEqual([{ type: 'dialog-closed', id: 1, outcome: 'accepted' }]);
    expect(tracker.blocks('S1')).toBe(false);
  });

  it('sends a prompt\'s default text on Accept without editing, and the typed text otherwise', async () => {
    const { tracker, answers } = setup();
    const first = tracker.opened('S1', { type: 'prompt', message: 'Name?', defaultPrompt: 'Ada', url: 'http://x/' });
    expect(first.defaultPrompt).toBe('Ada');
    tracker.answer(first.id, 'accept');
    tracker.pageClosed('S1', true);
    const second = tracker.opened('S1', { type: 'prompt', message: 'Name?', defaultPrompt: 'Ada', url: 'http://x/' });
    tracker.answer(second.id, 'accept', 'Grace');
    tracker.pageClosed('S1', true);
    const third = tracker.opened('S1', { type: 'prompt', message: 'Name?', url: 'http://x/' });
    tracker.answer(third.id, 'dismiss', 'ignored');
    await flush();
    expect(answers).toEqual([
      { sessionId: 'S1', accept: true, promptText: 'Ada' },
      { sessionId: 'S1', accept: true, promptText: 'Grace' },
      { sessionId: 'S1', accept: false },
    ]);
  });

  it('accepts alert and beforeunload at once and keeps them on the overlay a few seconds, without buttons', async () => {
    const { tracker, answers, shown, closed } = setup();
    tracker.opened('S1', { type: 'alert', message: 'Saved', url: 'http://x/' });
    await flush();
    expect(shown[0]).toMatchObject({ kind: 'alert', autoAccepted: true });
    expect(shown[0].timeoutAt).toBeUndefined();
    expect(answers).toEqual([{ sessionId: 'S1', accept: true }]);
    expect(tracker.answer(shown[0].id, 'dismiss')).toBe('ignored');

    tracker.pageClosed('S1', true);
    expect(tracker.blocks('S1')).toBe(false);
    expect(closed).toEqual([]);
    jest.advanceTimersByTime(3999);
    expect(closed).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(closed).toEqual([{ type: 'dialog-closed', id: 1, outcome: 'accepted' }]);

    tracker.opened('S2', { type: 'beforeunload', message: '', url: 'http://x/' });
    expect(answers[1]).toEqual({ sessionId: 'S2', accept: true });
  });

  it('dismisses a dialog nobody answers after the time-out and says so; the answer after that is ignored', async () => {
    const { tracker, answers, closed } = setup(5);
    const dialog = tracker.opened('S1', { type: 'confirm', message: 'Sure?', url: 'http://x/' });
    jest.advanceTimersByTime(4999);
    expect(answers).toEqual([]);
    jest.advanceTimersByTime(1);
    await flush();
    expect(answers).toEqual([{ sessionId: 'S1', accept: false }]);
    tracker.pageClosed('S1', false);
    expect(closed).toEqual([{ type: 'dialog-closed', id: dialog.id, outcome: 'timed-out', message: DIALOG_TIMED_OUT_TEXT }]);
    expect(tracker.answer(dialog.id, 'accept')).toBe('ignored');
    await flush();
    expect(answers).toHaveLength(1);
  });

  it('ignores an answer when the page or its agent answered first, and reports who did', async () => {
    const { tracker, answers, closed } = setup();
    const dialog = tracker.opened('S1', { type: 'confirm', message: 'Sure?', url: 'http://x/' });
    tracker.pageClosed('S1', false);
    expect(closed).toEqual([{ type: 'dialog-closed', id: dialog.id, outcome: 'answered-elsewhere' }]);
    expect(tracker.answer(dialog.id, 'accept')).toBe('ignored');
    jest.advanceTimersByTime(120_000);
    await flush();
    expect(answers).toEqual([]);
  });

  it('takes the first of two answers; one that fails because the page answered first is silent', async () => {
    const { tracker, answers, closed, failAnswers } = setup();
    const dialog = tracker.opened('S1', { type: 'confirm', message: 'Sure?', url: 'http://x/' });
    failAnswers();
    expect(tracker.answer(dialog.id, 'accept')).toBe('sent');
    expect(tracker.answer(dialog.id, 'dismiss')).toBe('ignored');
    await flush();
    expect(answers).toEqual([{ sessionId: 'S1', accept: true }]);
    tracker.pageClosed('S1', false);
    expect(closed[0].outcome).toBe('answered-elsewhere');
  });

  it('lets a viewer answer again when the first answer never reached the page', async () => {
    const { tracker, answers, failAnswers } = setup();
    const dialog = tracker.opened('S1', { type: 'confirm', message: 'Sure?', url: 'http://x/' });
    failAnswers();
    tracker.answer(dialog.id, 'accept');
    await flush();
    await flush();
    expect(tracker.answer(dialog.id, 'accept')).toBe('sent');
    expect(answers).toHaveLength(2);
  });

  it('keeps a dialog per page, closes one whose page went away, and lists what a new viewer must see', () => {
    const { tracker, closed } = setup();
    tracker.opened('TAB', { type: 'confirm', message: 'a', url: 'http://x/' });
    const popup = tracker.opened('POPUP', { type: 'prompt', message: 'b', defaultPrompt: '', url: 'http://y/' });
    expect(tracker.current().map((d) => d.message)).toEqual(['a', 'b']);
    tracker.pageGone('POPUP');
    expect(closed).toEqual([{ type: 'dialog-closed', id: popup.id, outcome: 'dismissed' }]);
    expect(tracker.current().map((d) => d.message)).toEqual(['a']);
    jest.advanceTimersByTime(60_000);
    tracker.dispose();
    expect(tracker.current()).toEqual([]);
  });
});
