import { ApiError, apiPath, type ApiClient } from '../api/api-client';
import { h, replaceChildren, setText } from '../dom/h';
import { toFramePoint, wheelPixels } from './frame-geometry';
import { buttonOf, isPasteShortcut, keyMessage, modifiersOf, textMessages } from './input-events';
import {
  liveViewSocketUrl,
  parseLiveViewMessage,
  parseTicket,
  type LiveViewClientMessage,
  type LiveViewMode,
} from './live-view.protocol';
import { applyLiveViewMessage, frameArrived, initialLiveViewState, type LiveViewState } from './live-view.state';

export interface LiveViewOptions {
  api: ApiClient;
  runId: string;
  stageId: string;
  /** `interactive` for a login gate; `view-only` for "Watch browser". */
  mode: LiveViewMode;
}

export interface LiveViewHandle {
  element: HTMLElement;
  dispose(): void;
}

export const NATIVE_PROMPTS_TIP =
  'Native browser prompts are not drawn in the picture and cannot be used: permission requests (camera, location, ' +
  "notifications), file pickers, HTTP authentication boxes, and the browser's own password or credential bubbles. " +
  'If the page seems frozen or asks for something you cannot see, cancel or pick another method.';

/** How long a notice (an alert's text, a timed-out dialog) stays over the picture. */
const NOTICE_MS = 6000;
/** The relay accepts a reopen once every couple of seconds. */
const REOPEN_COOLDOWN_MS = 2500;

/**
 * The live view: the Host's browser tab as a picture on a canvas, the page's
 * address, page dialogs as an overlay of plain text, and (interactive only)
 * mouse, wheel, keys and paste sent back, and "Reopen browser tab".
 */
export function createLiveView(options: LiveViewOptions): LiveViewHandle {
  return new LiveView(options).handle();
}

class LiveView {
  private state: LiveViewState = initialLiveViewState();
  private ws?: WebSocket;
  private disposed = false;
  private noticeTimer?: ReturnType<typeof setTimeout>;
  private pendingFrame?: ArrayBuffer;
  private decoding = false;
  private pendingMove?: { x: number; y: number; modifiers: number };
  private moveScheduled = false;
  private dialogAnswered = false;

  private readonly interactive: boolean;
  private readonly root: HTMLElement;
  private readonly address = h('span', { class: 'lv-url' });
  private readonly canvas: HTMLCanvasElement;
  private readonly overlay = h('div', { class: 'lv-dialog', role: 'dialog', 'aria-live': 'assertive', hidden: true });
  private readonly notice = h('div', { class: 'lv-notice', role: 'status', hidden: true });
  private readonly status = h('div', { class: 'lv-status', role: 'status' });
  private readonly popup = h('p', { class: 'lv-popup', hidden: true }, 'Following a popup the page opened; the view returns to the page when the popup closes.');
  private readonly reopen: HTMLButtonElement;

  constructor(private readonly options: LiveViewOptions) {
    this.interactive = options.mode === 'interactive';
    this.canvas = h('canvas', {
      class: 'lv-canvas',
      width: 1280,
      height: 720,
      tabindex: this.interactive ? 0 : undefined,
      'aria-label': this.interactive ? 'Browser view: click to focus, then type' : 'Browser view (read only)',
    });
    this.reopen = h('button', { type: 'button', on: { click: () => this.reopenTab() } }, 'Reopen browser tab');
    this.root = h(
      'section',
      { class: `live-view ${this.interactive ? 'lv-interactive' : 'lv-view-only'}`, 'data-testid': 'live-view' },
      h('p', { class: 'lv-address' }, 'Page: ', this.address),
      h('div', { class: 'lv-screen' }, this.canvas, this.overlay, this.notice, this.status),
      this.popup,
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
    return { element: this.root, dispose: () => this.dispose() };
  }

  private async connect(): Promise<void> {
    this.state = { ...initialLiveViewState(), url: this.state.url };
    this.render();
    const { api, runId, stageId, mode } = this.options;
    let ticketAnswer: unknown;
    try {
      ticketAnswer = await api.post(apiPath('runs', runId, 'stages', stageId, 'live-view', 'tickets'), { mode });
    } catch (error) {
      if (this.disposed) return;
      if (error instanceof ApiError && error.routeMissing) {
        this.state = {
          ...this.state,
          phase: 'unavailable',
          detail:
            'The live view is not available: this api does not issue live-view tickets yet (the live-view relay is not part of this build).' +
            (this.interactive ? ' If the Host has a screen, log in in the browser window on the Host, then confirm.' : ''),
        };
      } else {
        this.state = { ...this.state, phase: 'failed', detail: error instanceof Error ? error.message : String(error) };
      }
      this.render();
      return;
    }
    if (this.disposed) return;
    const ticket = parseTicket(ticketAnswer);
    if (!ticket) {
      this.state = { ...this.state, phase: 'failed', detail: 'The api answered the live-view ticket request with something the console does not understand.' };
      this.render();
      return;
    }
    const ws = new WebSocket(liveViewSocketUrl(ticket, location));
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws || this.state.phase !== 'connecting') return;
      this.state = { ...this.state, phase: 'live' };
      this.render();
    };
    ws.onmessage = (message) => {
      if (this.ws !== ws) return;
      if (message.data instanceof ArrayBuffer) return this.frame(message.data);
      if (typeof message.data !== 'string') return;
      const msg = parseLiveViewMessage(message.data);
      if (!msg) return;
      const before = this.state;
      this.state = applyLiveViewMessage(this.state, msg);
      if (msg.type === 'dialog') this.dialogAnswered = false;
      if (this.state.notice && this.state.notice !== before.notice) this.scheduleNoticeEnd();
      this.render();
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      if (this.state.phase === 'connecting' || this.state.phase === 'live') {
        this.state = { ...this.state, phase: 'disconnected', dialog: undefined, detail: 'The connection to the browser view was lost.' };
        this.render();
      }
    };
  }

  private frame(data: ArrayBuffer): void {
    // Keep only the newest frame while one decodes: a slow link shows the latest picture, not a backlog.
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
        const wasLive = this.state.phase === 'live' && this.state.framesSeen > 0;
        this.state = frameArrived(this.state);
        if (!wasLive) this.render();
      } catch {
        // A frame that does not decode is skipped; the next one replaces it.
      }
    }
    this.decoding = false;
  }

  private listen(): void {
    const c = this.canvas;
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('mousedown', (e) => {
      c.focus();
      e.preventDefault();
      this.mouse('down', e);
    });
    c.addEventListener('mouseup', (e) => this.mouse('up', e));
    c.addEventListener('dblclick', (e) => this.mouse('dblclick', e));
    c.addEventListener('mousemove', (e) => {
      const point = this.point(e);
      if (!point) return;
      // At most one move per animation frame.
      this.pendingMove = { ...point, modifiers: modifiersOf(e) };
      if (this.moveScheduled) return;
      this.moveScheduled = true;
      requestAnimationFrame(() => {
        this.moveScheduled = false;
        const move = this.pendingMove;
        this.pendingMove = undefined;
        if (move) this.send({ type: 'mouse', action: 'move', x: move.x, y: move.y, button: 'left', modifiers: move.modifiers });
      });
    });
    c.addEventListener(
      'wheel',
      (e) => {
        const point = this.point(e);
        if (!point || !this.canSend()) return;
        e.preventDefault();
        this.send({ type: 'wheel', ...point, ...wheelPixels(e.deltaX, e.deltaY, e.deltaMode, this.frameSize().height) });
      },
      { passive: false },
    );
    c.addEventListener('keydown', (e) => {
      if (!this.canSend() || isPasteShortcut(e)) return;
      // Tab, Backspace, arrows, Enter… belong to the remote page, not to this one.
      e.preventDefault();
      this.send(keyMessage('down', e));
    });
    c.addEventListener('keyup', (e) => {
      if (!this.canSend() || isPasteShortcut(e)) return;
      e.preventDefault();
      this.send(keyMessage('up', e));
    });
    c.addEventListener('paste', (e) => {
      const text = e.clipboardData?.getData('text/plain');
      if (!text || !this.canSend()) return;
      e.preventDefault();
      for (const message of textMessages(text)) this.send(message);
    });
  }

  private mouse(action: 'down' | 'up' | 'dblclick', e: MouseEvent): void {
    const point = this.point(e);
    const button = buttonOf(e.button);
    if (!point || !button) return;
    this.send({ type: 'mouse', action, ...point, button, modifiers: modifiersOf(e) });
  }

  private point(e: MouseEvent): { x: number; y: number } | undefined {
    return toFramePoint(this.canvas.getBoundingClientRect(), e.clientX, e.clientY, this.frameSize());
  }

  private frameSize(): { width: number; height: number } {
    const meta = this.state.meta;
    return meta ? { width: meta.deviceWidth, height: meta.deviceHeight } : { width: this.canvas.width, height: this.canvas.height };
  }

  private canSend(): boolean {
    return this.interactive && this.state.phase === 'live' && this.ws?.readyState === WebSocket.OPEN;
  }

  private send(message: LiveViewClientMessage): void {
    if (this.canSend()) this.ws?.send(JSON.stringify(message));
  }

  private reopenTab(): void {
    if (!this.canSend()) return;
    this.send({ type: 'reopen' });
    this.reopen.disabled = true;
    setTimeout(() => (this.reopen.disabled = false), REOPEN_COOLDOWN_MS);
  }

  private answerDialog(accept: boolean, promptText?: string): void {
    this.dialogAnswered = true;
    this.send(promptText === undefined ? { type: 'dialog', accept } : { type: 'dialog', accept, promptText });
    this.render();
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

  private render(): void {
    const s = this.state;
    setText(this.address, s.url ?? '(not known yet)');
    this.popup.hidden = !s.followingPopup;
    this.notice.hidden = !s.notice;
    setText(this.notice, s.notice ?? '');
    this.renderDialog();
    this.renderStatus();
    this.reopen.hidden = s.phase !== 'live';
  }

  private renderDialog(): void {
    const dialog = this.state.dialog;
    this.overlay.hidden = !dialog;
    if (!dialog) return replaceChildren(this.overlay);
    const title = dialog.dialogType === 'prompt' ? 'The page asks:' : 'The page asks you to confirm:';
    if (!this.interactive) {
      return replaceChildren(
        this.overlay,
        h('p', { class: 'lv-dialog-title' }, title),
        h('p', { class: 'lv-dialog-message' }, dialog.message),
        h('p', { class: 'muted' }, `Waiting for ${dialog.waitingFor ?? 'the operator at the gate'} to answer.`),
      );
    }
    // Render once per dialog: re-rendering would reset what the operator typed into the prompt.
    if (this.overlay.dataset['dialogKey'] === dialogKey(dialog) && !this.dialogAnswered) return;
    this.overlay.dataset['dialogKey'] = dialogKey(dialog);
    const input = dialog.dialogType === 'prompt' ? h('input', { type: 'text', class: 'lv-prompt', 'aria-label': 'Answer' }) : undefined;
    if (input) input.value = dialog.defaultPrompt ?? '';
    const disabled = this.dialogAnswered || !this.canSend();
    replaceChildren(
      this.overlay,
      h('p', { class: 'lv-dialog-title' }, title),
      h('p', { class: 'lv-dialog-message' }, dialog.message),
      input,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', class: 'primary', disabled, on: { click: () => this.answerDialog(true, input?.value) } }, 'Accept'),
        h('button', { type: 'button', disabled, on: { click: () => this.answerDialog(false) } }, 'Dismiss'),
      ),
      this.dialogAnswered && h('p', { class: 'muted' }, 'Answer sent. If the page or the agent answered first, yours is ignored.'),
    );
  }

  private renderStatus(): void {
    const s = this.state;
    const again = (label: string) => h('button', { type: 'button', on: { click: () => void this.connect() } }, label);
    // The last picture stays visible under the status and under an open dialog.
    this.status.hidden = s.phase === 'live' && s.framesSeen > 0;
    this.root.dataset['phase'] = s.phase;
    switch (s.phase) {
      case 'connecting':
        return replaceChildren(this.status, 'Connecting to the browser…');
      case 'live':
        return replaceChildren(this.status, 'Waiting for the first picture…');
      case 'ended':
        return replaceChildren(this.status, s.detail ?? 'The live view closed.');
      case 'unavailable':
        return replaceChildren(this.status, s.detail ?? 'The live view is not available.');
      case 'disconnected':
        return replaceChildren(this.status, h('span', null, s.detail ?? 'Disconnected.'), ' ', again('Reconnect'));
      case 'failed':
        return replaceChildren(this.status, h('span', null, s.detail ?? 'The live view failed.'), ' ', again('Try again'));
    }
  }

  private dispose(): void {
    this.disposed = true;
    clearTimeout(this.noticeTimer);
    const ws = this.ws;
    this.ws = undefined;
    ws?.close(1000, 'view closed');
  }
}

function dialogKey(d: { dialogType: string; message: string }): string {
  return `${d.dialogType}:${d.message}`;
}
