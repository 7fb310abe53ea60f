import { LIVE_VIEW_CLOSE_CODES, LIVE_VIEW_LIMITS, type LiveViewDialogMessage } from '@stageflow/contracts';
import { ApiError, apiPath, type ApiClient } from '../api/api-client';
import { h, replaceChildren, setText } from '../dom/h';
import { toPictureFraction, wheelPixels } from './frame-geometry';
import { buttonOf, ClickSequencer, dialogAnswer, isPasteShortcut, keyMessage, textMessages, withModifiers } from './input-events';
import { liveViewSocketUrl, parseLiveViewMessage, parseTicket, type LiveViewClientMessage, type LiveViewMode } from './live-view.protocol';
import { applyLiveViewMessage, closedByConsole, frameArrived, initialLiveViewState, type LiveViewState } from './live-view.state';

export interface LiveViewOptions {
  api: ApiClient;
  runId: string;
  stageId: string;
  /** `interactive` for a login gate; `view-only` for "Watch browser". */
  mode: LiveViewMode;
}

export interface LiveViewHandle {
  element: HTMLElement;
  /** Ends the view here at once (the gate was answered, the stage ended): closes the socket, keeps the last picture, says why. */
  end(detail: string): void;
  dispose(): void;
}

export const NATIVE_PROMPTS_TIP =
  'Native browser prompts are not drawn in the picture and cannot be used: permission requests (camera, location, ' +
  "notifications), file pickers, HTTP authentication boxes, and the browser's own password or credential bubbles. " +
  'If the page seems frozen or asks for something you cannot see, cancel or pick another method.';

/** How long a notice (a timed-out dialog, a closed popup) and an error from the relay stay over the picture. */
const NOTICE_MS = 6000;
const ERROR_MS = 5000;
/** The relay takes one reopen per interval; the button rests a little longer. */
const REOPEN_REST_MS = LIVE_VIEW_LIMITS.reopenIntervalMs + 500;
/** An auto-accepted dialog goes when the relay says so (after 4 s); this is the backstop if that message is lost. */
const AUTO_ACCEPTED_BACKSTOP_MS = LIVE_VIEW_LIMITS.autoAcceptedOverlayMs + 2000;
/** A press that moves this far (screen pixels) before it is released is a drag, not a click. */
const DRAG_THRESHOLD_PX = 4;

/**
 * The live view: the Host's browser tab as a picture on a canvas, the page's
 * address, page dialogs as an overlay of plain text, and (interactive only)
 * mouse, wheel, keys and paste sent back, and "Reopen browser tab". A
 * view-only view attaches no input listener at all: it sends nothing.
 */
export function createLiveView(options: LiveViewOptions): LiveViewHandle {
  return new LiveView(options).handle();
}

interface Press {
  button: 'left' | 'middle' | 'right';
  clientX: number;
  clientY: number;
  at: { x: number; y: number };
  dragging: boolean;
}

class LiveView {
  private state: LiveViewState = initialLiveViewState();
  private ws?: WebSocket;
  private disposed = false;
  private noticeTimer?: ReturnType<typeof setTimeout>;
  private errorTimer?: ReturnType<typeof setTimeout>;
  private dialogTimer?: ReturnType<typeof setTimeout>;
  private pendingFrame?: ArrayBuffer;
  private decoding = false;
  private pendingMove?: LiveViewClientMessage;
  private moveScheduled = false;
  private press?: Press;
  private dialogAnswered?: number;
  private readonly clicks = new ClickSequencer((message) => this.send(message));

  private readonly interactive: boolean;
  private readonly root: HTMLElement;
  private readonly address = h('span', { class: 'lv-url', 'data-testid': 'live-view-url' });
  private readonly canvas: HTMLCanvasElement;
  private readonly overlay = h('div', { class: 'lv-dialog', role: 'dialog', 'aria-live': 'assertive', 'data-testid': 'live-view-dialog', hidden: true });
  private readonly notice = h('div', { class: 'lv-notice', role: 'status', 'data-testid': 'live-view-notice', hidden: true });
  private readonly error = h('div', { class: 'lv-error', role: 'alert', 'data-testid': 'live-view-error', hidden: true });
  private readonly status = h('div', { class: 'lv-status', role: 'status', 'data-testid': 'live-view-status' });
  private readonly popup = h('p', { class: 'lv-popup', 'data-testid': 'live-view-popup', hidden: true });
  private readonly reopen: HTMLButtonElement;

  constructor(private readonly options: LiveViewOptions) {
    this.interactive = options.mode === 'interactive';
    this.canvas = h('canvas', {
      class: 'lv-canvas',
      width: 1280,
      height: 720,
      'data-testid': 'live-view-canvas',
      tabindex: this.interactive ? 0 : undefined,
      'aria-label': this.interactive ? 'Browser view: click to focus, then type' : 'Browser view (read only)',
    });
    this.reopen = h('button', { type: 'button', 'data-testid': 'live-view-reopen', on: { click: () => this.reopenTab() } }, 'Reopen browser tab');
    this.root = h(
      'section',
      { class: `live-view ${this.interactive ? 'lv-interactive' : 'lv-view-only'}`, 'data-testid': 'live-view', 'data-mode': options.mode },
      h('p', { class: 'lv-address' }, 'Page: ', this.address),
      this.popup,
      h('div', { class: 'lv-screen' }, this.canvas, this.overlay, this.notice, this.error),
      this.status,
      this.interactive &&
        h(
          'details',
          { class: 'lv-stuck' },
          h('summary', null, 'Page seems stuck?'),
          h(
            'p',
            null,
            'If typing and clicking do nothing (a known issue after submitting some login forms), reopen the tab: the Host opens the same address in a fresh tab of the same browser and moves the view to it. You stay signed in; what only the old tab held is lost.',
          ),
          this.reopen,
        ),
      this.interactive && h('p', { class: 'tip' }, NATIVE_PROMPTS_TIP),
    );
    if (this.interactive) this.listen();
    this.render();
    void this.connect();
  }

  handle(): LiveViewHandle {
    return { element: this.root, end: (detail) => this.end(detail), dispose: () => this.dispose() };
  }

  private async connect(): Promise<void> {
    this.closeSocket();
    this.state = { ...initialLiveViewState(), url: this.state.url, framesSeen: this.state.framesSeen };
    this.render();
    const { api, runId, stageId, mode } = this.options;
    let ticketAnswer: unknown;
    try {
      ticketAnswer = await api.post(apiPath('runs', runId, 'stages', stageId, 'live-view', 'tickets'), { mode });
    } catch (error) {
      if (this.disposed || this.state.phase !== 'connecting') return;
      if (error instanceof ApiError && error.routeMissing) {
        this.state = {
          ...this.state,
          phase: 'unavailable',
          detail:
            'The live view is not available: this api does not issue live-view tickets.' +
            (this.interactive ? ' If the Host has a screen, log in in the browser window on the Host, then confirm.' : ''),
        };
      } else {
        this.state = { ...this.state, phase: 'failed', detail: `The live view could not be opened: ${error instanceof Error ? error.message : String(error)}` };
      }
      this.render();
      return;
    }
    if (this.disposed || this.state.phase !== 'connecting') return;
    const ticket = parseTicket(ticketAnswer, { runId, stageId, mode });
    if (!ticket) {
      this.state = { ...this.state, phase: 'failed', detail: 'The api answered the live-view ticket request with something the console does not understand.' };
      this.render();
      return;
    }
    const ws = new WebSocket(liveViewSocketUrl(ticket, location));
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onmessage = (message) => {
      if (this.ws !== ws) return;
      if (message.data instanceof ArrayBuffer) return this.frame(message.data);
      if (typeof message.data !== 'string') return;
      const msg = parseLiveViewMessage(message.data);
      if (!msg) return;
      const before = this.state;
      this.state = applyLiveViewMessage(this.state, msg);
      if (this.state.notice && this.state.notice !== before.notice) this.scheduleNoticeEnd();
      if (this.state.error && this.state.error !== before.error) this.scheduleErrorEnd();
      if (this.state.dialog && this.state.dialog !== before.dialog) this.dialogShown(this.state.dialog);
      if (this.state.phase === 'ended') this.clicks.cancel();
      this.render();
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.clicks.cancel();
      const s = this.state;
      if (s.phase === 'ended') return;
      if (event.code === LIVE_VIEW_CLOSE_CODES.ended) {
        this.state = { ...s, phase: 'ended', dialog: undefined, endReason: 'closed', detail: 'The live view closed.' };
      } else if (s.phase === 'connecting') {
        // A refused upgrade reaches a browser as a bare close: the api's {code, message} is not readable here.
        this.state = { ...s, phase: 'failed', detail: 'The live view could not be opened: the api refused the connection or cannot reach the live-view relay.' };
      } else {
        this.state = { ...s, phase: 'disconnected', dialog: undefined, detail: 'The connection to the browser view was lost.' };
      }
      this.render();
    };
  }

  private frame(data: ArrayBuffer): void {
    // Keep only the newest picture while one decodes: a slow link shows the latest picture, not a backlog.
    this.pendingFrame = data;
    if (!this.decoding) void this.decodeFrames();
  }

  private async decodeFrames(): Promise<void> {
    this.decoding = true;
    while (this.pendingFrame && !this.disposed) {
      const data = this.pendingFrame;
      this.pendingFrame = undefined;
      try {
        const bitmap = await createImageBitmap(new Blob([data], { type: 'image/jpeg' }));
        if (this.canvas.width !== bitmap.width || this.canvas.height !== bitmap.height) {
          this.canvas.width = bitmap.width;
          this.canvas.height = bitmap.height;
        }
        this.canvas.getContext('2d')?.drawImage(bitmap, 0, 0);
        bitmap.close();
        const first = this.state.framesSeen === 0;
        this.state = frameArrived(this.state);
        this.canvas.dataset['frames'] = String(this.state.framesSeen);
        if (first) this.render();
      } catch {
        // A picture that does not decode is skipped; the next one replaces it.
      }
    }
    this.decoding = false;
  }

  private listen(): void {
    const c = this.canvas;
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('mousedown', (e) => {
      // The point first, and no scrolling on focus: a focus that scrolls the canvas would move it under the pointer.
      const at = this.point(e);
      c.focus({ preventScroll: true });
      e.preventDefault();
      const button = buttonOf(e.button);
      this.press = at && button ? { button, clientX: e.clientX, clientY: e.clientY, at, dragging: false } : undefined;
    });
    c.addEventListener('mousemove', (e) => {
      const at = this.point(e);
      if (!at) return;
      const press = this.press;
      if (press && press.button === 'left' && !press.dragging && Math.hypot(e.clientX - press.clientX, e.clientY - press.clientY) > DRAG_THRESHOLD_PX) {
        press.dragging = true;
        this.sendInput(withModifiers({ type: 'mouse', action: 'down', ...press.at }, e));
      }
      // Hovering between the two clicks of a double click would split it: the click carries its own point.
      if ((press && !press.dragging) || (!press && this.clicks.waiting)) return;
      this.queueMove(withModifiers({ type: 'mouse', action: 'move', ...at }, e));
    });
    c.addEventListener('mouseup', (e) => this.release(e));
    c.addEventListener('mouseleave', (e) => {
      if (this.press?.dragging) this.release(e);
    });
    c.addEventListener(
      'wheel',
      (e) => {
        const at = this.point(e);
        if (!at || !this.canSend()) return;
        e.preventDefault();
        const height = this.state.meta?.deviceHeight ?? this.canvas.height;
        this.sendInput(withModifiers({ type: 'wheel', ...at, ...wheelPixels(e.deltaX, e.deltaY, e.deltaMode, height, LIVE_VIEW_LIMITS.maxWheelDelta) }, e));
      },
      { passive: false },
    );
    c.addEventListener('keydown', (e) => {
      if (!this.canSend() || isPasteShortcut(e)) return;
      const message = keyMessage(e);
      if (!message) return;
      // Tab, Backspace, arrows, Enter… belong to the remote page, not to this one.
      e.preventDefault();
      this.sendInput(message);
    });
    c.addEventListener('paste', (e) => {
      const text = e.clipboardData?.getData('text/plain');
      if (!text || !this.canSend()) return;
      e.preventDefault();
      for (const message of textMessages(text)) this.sendInput(message);
    });
  }

  private release(e: MouseEvent): void {
    const press = this.press;
    this.press = undefined;
    if (!press) return;
    if (press.dragging) {
      this.flushMove();
      this.sendInput(withModifiers({ type: 'mouse', action: 'up', ...(this.point(e) ?? press.at) }, e));
      return;
    }
    const message = withModifiers({ type: 'mouse' as const, action: 'click' as const, ...press.at, ...(press.button === 'left' ? {} : { button: press.button }) }, e);
    // A move still waiting for its animation frame happened before this click: it goes
    // now, or its later flush would send a waiting first click alone and split a double
    // click (seen on a loaded machine). Between the two clicks of a double, it is dropped.
    const move = this.pendingMove;
    this.pendingMove = undefined;
    if (move && !this.clicks.waiting) this.sendInput(move);
    if (this.canSend()) this.clicks.click(message, e.clientX, e.clientY);
  }

  /** At most one move per animation frame. */
  private queueMove(message: LiveViewClientMessage): void {
    this.pendingMove = message;
    if (this.moveScheduled) return;
    this.moveScheduled = true;
    requestAnimationFrame(() => {
      this.moveScheduled = false;
      this.flushMove();
    });
  }

  private flushMove(): void {
    const move = this.pendingMove;
    this.pendingMove = undefined;
    if (move) this.sendInput(move);
  }

  private point(e: MouseEvent): { x: number; y: number } | undefined {
    return toPictureFraction(this.canvas.getBoundingClientRect(), { width: this.canvas.width, height: this.canvas.height }, e.clientX, e.clientY);
  }

  private canSend(): boolean {
    return this.interactive && this.state.phase === 'live' && this.ws?.readyState === WebSocket.OPEN;
  }

  /** Input other than a click: a click still waiting for its double goes first. */
  private sendInput(message: LiveViewClientMessage): void {
    this.clicks.flush();
    this.send(message);
  }

  private send(message: LiveViewClientMessage): void {
    if (this.canSend()) this.ws?.send(JSON.stringify(message));
  }

  private reopenTab(): void {
    if (!this.canSend()) return;
    this.sendInput({ type: 'reopen' });
    this.reopen.disabled = true;
    setTimeout(() => (this.reopen.disabled = false), REOPEN_REST_MS);
  }

  private answerDialog(dialog: LiveViewDialogMessage, action: 'accept' | 'dismiss', typed?: string): void {
    this.dialogAnswered = dialog.id;
    this.sendInput(dialogAnswer(dialog, action, typed));
    this.renderDialog(true);
  }

  private dialogShown(dialog: LiveViewDialogMessage): void {
    clearTimeout(this.dialogTimer);
    if (!dialog.autoAccepted) return;
    this.dialogTimer = setTimeout(() => {
      if (this.state.dialog?.id !== dialog.id) return;
      this.state = { ...this.state, dialog: undefined };
      this.render();
    }, AUTO_ACCEPTED_BACKSTOP_MS);
  }

  private scheduleNoticeEnd(): void {
    clearTimeout(this.noticeTimer);
    const shown = this.state.notice;
    this.noticeTimer = setTimeout(() => {
      if (this.state.notice !== shown) return;
      this.state = { ...this.state, notice: undefined };
      this.render();
    }, NOTICE_MS);
  }

  private scheduleErrorEnd(): void {
    clearTimeout(this.errorTimer);
    const shown = this.state.error;
    this.errorTimer = setTimeout(() => {
      if (this.state.error !== shown) return;
      this.state = { ...this.state, error: undefined };
      this.render();
    }, ERROR_MS);
  }

  private render(): void {
    const s = this.state;
    this.root.dataset['phase'] = s.phase;
    setText(this.address, s.url ?? '(not known yet)');
    this.popup.hidden = s.popupDepth === 0;
    setText(
      this.popup,
      s.popupDepth > 0
        ? `The view follows a popup the page opened${s.popupUrl ? ` (${s.popupUrl})` : ''}; it returns to the page when the popup closes.`
        : '',
    );
    this.notice.hidden = !s.notice;
    setText(this.notice, s.notice ?? '');
    this.error.hidden = !s.error || s.phase !== 'live';
    this.error.dataset['code'] = s.error?.code ?? '';
    setText(this.error, s.error ? `${s.error.message} (${s.error.code})` : '');
    this.renderDialog();
    this.renderStatus();
    this.reopen.hidden = s.phase !== 'live';
    if (s.phase === 'ended') this.canvas.removeAttribute('tabindex');
  }

  private renderDialog(force = false): void {
    const dialog = this.state.dialog;
    this.overlay.hidden = !dialog;
    if (!dialog) {
      delete this.overlay.dataset['dialogKey'];
      return replaceChildren(this.overlay);
    }
    // Rendered once per dialog: rendering again would reset what the operator typed into the prompt.
    const key = `${dialog.id}:${dialog.kind}:${dialog.canAnswer}:${dialog.message}`;
    if (this.overlay.dataset['dialogKey'] === key && !force) return;
    this.overlay.dataset['dialogKey'] = key;
    this.overlay.dataset['kind'] = dialog.kind;
    const title = {
      confirm: 'The page asks you to confirm:',
      prompt: 'The page asks:',
      alert: 'The page showed an alert:',
      beforeunload: 'The page asks before leaving:',
    }[dialog.kind];
    const head = [h('p', { class: 'lv-dialog-title' }, title), h('p', { class: 'lv-dialog-message' }, dialog.message)];
    if (dialog.autoAccepted) {
      return replaceChildren(this.overlay, ...head, h('p', { class: 'muted' }, 'Accepted automatically; the page went on.'));
    }
    if (!dialog.canAnswer || !this.interactive) {
      const waits = dialog.waitsFor === 'operator' ? 'Waiting for the operator (an interactive live view) to answer.' : 'Nobody needs to answer it.';
      return replaceChildren(this.overlay, ...head, h('p', { class: 'muted', 'data-testid': 'live-view-dialog-waits' }, waits));
    }
    const previous = this.overlay.querySelector<HTMLInputElement>('input.lv-prompt');
    const input =
      dialog.kind === 'prompt' ? h('input', { type: 'text', class: 'lv-prompt', 'aria-label': 'Answer', 'data-testid': 'live-view-dialog-input' }) : undefined;
    if (input) input.value = previous && this.overlay.dataset['dialogId'] === String(dialog.id) ? previous.value : (dialog.defaultPrompt ?? '');
    this.overlay.dataset['dialogId'] = String(dialog.id);
    const answered = this.dialogAnswered === dialog.id;
    const disabled = answered || !this.canSend();
    replaceChildren(
      this.overlay,
      ...head,
      input,
      h(
        'div',
        { class: 'buttons' },
        h(
          'button',
          { type: 'button', class: 'primary', disabled, 'data-testid': 'live-view-dialog-accept', on: { click: () => this.answerDialog(dialog, 'accept', input?.value) } },
          'Accept',
        ),
        h('button', { type: 'button', disabled, 'data-testid': 'live-view-dialog-dismiss', on: { click: () => this.answerDialog(dialog, 'dismiss') } }, 'Dismiss'),
      ),
      dialog.timeoutAt && h('p', { class: 'muted' }, `If nobody answers, the Host dismisses it at ${new Date(dialog.timeoutAt).toLocaleTimeString()}.`),
      answered && h('p', { class: 'muted' }, 'Answer sent. If the page or the agent answered first, yours is ignored.'),
    );
  }

  private renderStatus(): void {
    const s = this.state;
    const again = (label: string) => h('button', { type: 'button', 'data-testid': 'live-view-reconnect', on: { click: () => void this.connect() } }, label);
    this.status.dataset['phase'] = s.phase;
    switch (s.phase) {
      case 'connecting':
        return replaceChildren(this.status, 'Connecting to the browser…');
      case 'live':
        if (s.framesSeen === 0) return replaceChildren(this.status, 'Waiting for the first picture…');
        return replaceChildren(this.status, this.interactive ? 'Live: click the picture to focus it, then type.' : 'Live, read only: watching the stage’s browser.');
      case 'ended':
        // The relay stopping is not the end of the stage: another relay (or this one, restarted) can show it again.
        return replaceChildren(this.status, s.detail ?? 'The live view closed.', s.endReason === 'relay-stopping' && ' ', s.endReason === 'relay-stopping' && again('Reconnect'));
      case 'unavailable':
        return replaceChildren(this.status, s.detail ?? 'The live view is not available.');
      case 'disconnected':
        return replaceChildren(this.status, s.detail ?? 'Disconnected.', ' ', again('Reconnect'));
      case 'failed':
        return replaceChildren(this.status, s.detail ?? 'The live view failed.', ' ', again('Try again'));
    }
  }

  private end(detail: string): void {
    if (this.disposed) return;
    this.state = closedByConsole(this.state, detail);
    this.clicks.cancel();
    this.closeSocket();
    this.render();
  }

  private closeSocket(): void {
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED && ws.readyState !== WebSocket.CLOSING) ws.close(1000, 'view closed');
  }

  private dispose(): void {
    this.disposed = true;
    this.clicks.cancel();
    clearTimeout(this.noticeTimer);
    clearTimeout(this.errorTimer);
    clearTimeout(this.dialogTimer);
    this.closeSocket();
  }
}
