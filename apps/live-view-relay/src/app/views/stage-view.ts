import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import type { CdpConnection, TargetInfo } from '@stageflow/cdp';
import {
  LIVE_VIEW_LIMITS,
  type LiveViewClientMessage,
  type LiveViewEndReason,
  type LiveViewMode,
  type LiveViewMouseMessage,
  type LiveViewServerMessage,
  type ReopenedStageSession,
  type SessionRecord,
} from '@stageflow/contracts';
import type { Frame } from '../viewers/frame-outbox';
import { DialogTracker, type DialogOpening, type ShownDialog } from './dialog-tracker';
import { keyCommands, mouseCommands, pasteCommands, wheelCommands, type FrameMeta, type InputCommand } from './input-mapping';
import { InputQueue } from './input-queue';
import { jpegSize } from './jpeg-size';
import { ViewStack, WINDOW_OPEN_MATCH_MS, type ViewedPage } from './view-stack';

/** What a stage view needs of a connected viewer (a WebSocket, in the relay). */
export interface ViewerPort {
  readonly id: number;
  readonly mode: LiveViewMode;
  send(message: LiveViewServerMessage): void;
  sendFrame(frame: Frame): void;
  /** The view moved to another page: the next frame comes with its geometry. */
  resetFrames(): void;
  /** Sends `ended` and closes the socket. */
  end(reason: LiveViewEndReason, message: string): void;
  /** Sends an `error` (throttled per code by the viewer). */
  refuse(code: string, message: string): void;
}

export interface StageViewOptions {
  /** Host config `browser.dialog_timeout_seconds`. */
  dialogTimeoutSeconds: number;
  /** Least time between two screencast frames (acks are held back until then): at most 1000 / this frames a second. */
  minFrameIntervalMs: number;
  /** Bound on CDP calls the view makes (a page behind a dialog answers none). */
  cdpTimeoutMs: number;
  /** How long one input command may hold the queue. */
  inputCommandTimeoutMs: number;
  /** How long a view with no viewer left stays attached (a reloading console finds its dialog still shown). */
  lingerMs: number;
}

export const DEFAULT_STAGE_VIEW_OPTIONS: Omit<StageViewOptions, 'dialogTimeoutSeconds'> = {
  // 30 fps: over the 25 the spec asks for, with room for a late ack; ~2 % of a core per view.
  minFrameIntervalMs: 33,
  cdpTimeoutMs: 5000,
  inputCommandTimeoutMs: 2000,
  lingerMs: 30_000,
};

export interface StageViewDeps {
  /** A browser-level CDP connection to the session's browser. */
  connect(endpoint: string): Promise<CdpConnection>;
  /** browser-host's "Reopen browser tab" for the session. */
  reopen(sessionId: string): Promise<ReopenedStageSession>;
  /** Called once when the view is over (the registry forgets it). */
  onEnded(view: StageView): void;
  log: LoggerService;
  now?: () => number;
}

interface ScreencastFrameEvent {
  data: string;
  sessionId: number;
  metadata: FrameMeta & { timestamp?: number };
}

interface AttachedEvent {
  sessionId: string;
  targetInfo: TargetInfo;
  waitingForDebugger: boolean;
}

/** Characters of a dialog's text passed on (a page can put megabytes in an alert). */
const MAX_DIALOG_TEXT = 10_000;

const SCREENCAST = { format: 'jpeg', quality: LIVE_VIEW_LIMITS.jpegQuality, maxWidth: LIVE_VIEW_LIMITS.maxFrameSize, maxHeight: LIVE_VIEW_LIMITS.maxFrameSize };

/**
 * One stage session's live view, shared by its viewers: one CDP connection to the
 * session's browser, attached (flattened) to the stage's tab and to the popups it
 * opens.
 *
 * - Pictures: `Page.startScreencast` on the page shown; the first one from a
 *   screenshot (a static page sends no frames). Every frame is acked at once, paced
 *   to {@link StageViewOptions.minFrameIntervalMs}, whoever watches: a slow viewer only
 *   drops frames (see FrameOutbox).
 * - Popups: new pages are auto-attached browser-wide, paused before their scripts run
 *   (`waitForDebuggerOnStart`), so a popup's dialog on load is seen. Chromium 156 does
 *   not auto-attach popups from the page's own session (checked), hence browser-wide;
 *   every page that is not a popup of the view is resumed and detached at once.
 * - Dialogs: see DialogTracker. Input: in order, mapped through the shown frame's
 *   geometry, refused while a dialog blocks the page, and only from interactive viewers.
 *
 * Frames and input are never logged.
 */
export class StageView {
  readonly sessionId: string;
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  private readonly viewers = new Set<ViewerPort>();
  private readonly stack: ViewStack;
  private readonly dialogs: DialogTracker;
  private readonly input: InputQueue;
  private readonly offs: Array<() => void> = [];
  private readonly attaching = new Set<string>();
  /** URLs of new pages from `Target.targetCreated` (the auto-attach that follows may carry none yet). */
  private readonly createdUrls = new Map<string, string>();
  /** Opener-less pages that may be a popup once their URL is known: target → session. */
  private readonly maybePopups = new Map<string, { sessionId: string; until: number }>();
  private readonly now: () => number;
  private screencastSession?: string;
  /**
   * The newest picture of each page of the view (by its session): shown at once to a
   * viewer who joins or when the view returns to the page, and its geometry maps input.
   * `version` counts pictures, so a slow screenshot never replaces a newer frame.
   */
  private readonly pictures = new Map<string, { frame: Frame; version: number }>();
  private lastAckAt = 0;
  private ackTimer?: ReturnType<typeof setTimeout>;
  private lingerTimer?: ReturnType<typeof setTimeout>;
  private tabGoneTimer?: ReturnType<typeof setTimeout>;
  private reopening = false;
  private lastReopenAt = -Infinity;
  private ended = false;

  private constructor(
    private readonly cdp: CdpConnection,
    session: SessionRecord,
    rootSession: string,
    rootUrl: string,
    private readonly options: StageViewOptions,
    private readonly deps: StageViewDeps,
  ) {
    this.sessionId = session.sessionId;
    this.runId = session.runId;
    this.stageId = session.stageId;
    this.attempt = session.attempt;
    this.now = deps.now ?? Date.now;
    this.stack = new ViewStack({ targetId: session.targetId, sessionId: rootSession, url: rootUrl });
    this.dialogs = new DialogTracker(
      {
        answer: async (sessionId, accept, promptText) => {
          await this.cdp.send('Page.handleJavaScriptDialog', promptText === undefined ? { accept } : { accept, promptText }, {
            sessionId,
            timeoutMs: this.options.cdpTimeoutMs,
          });
        },
        show: (dialog) => this.forEachViewer((viewer) => viewer.send(dialogMessage(dialog, viewer.mode))),
        closed: (message, sessionId) => {
          this.forEachViewer((viewer) => viewer.send(message));
          // The page was blocked: its picture (and maybe its screencast) starts now.
          if (sessionId === this.screencastSession) void this.startPicture(this.stack.top);
        },
        now: this.now,
        setTimer: (fn, ms) => setTimeout(fn, ms),
        clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
      },
      options.dialogTimeoutSeconds,
    );
    this.input = new InputQueue(
      (sessionId, command) => this.cdp.send(command.method, command.params, { sessionId, timeoutMs: this.options.cdpTimeoutMs }),
      options.inputCommandTimeoutMs,
    );
  }

  /** Attaches to the session's tab and starts watching for popups; the picture starts with the first viewer. */
  static async open(session: SessionRecord, options: StageViewOptions, deps: StageViewDeps): Promise<StageView> {
    const cdp = await deps.connect(session.cdpEndpoint);
    try {
      const rootSession = await cdp.attachToTab(session.targetId, { timeoutMs: options.cdpTimeoutMs });
      const { targetInfo } = await cdp.send<{ targetInfo: TargetInfo }>('Target.getTargetInfo', { targetId: session.targetId });
      const view = new StageView(cdp, session, rootSession, targetInfo.url, options, deps);
      await view.start();
      return view;
    } catch (error) {
      await cdp.close();
      throw error;
    }
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** The address shown. */
  get url(): string {
    return this.stack.top.url;
  }

  join(viewer: ViewerPort): void {
    if (this.ended) {
      viewer.end('tab-closed', 'This live view has just ended.');
      return;
    }
    const wasIdle = this.viewers.size === 0;
    this.viewers.add(viewer);
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    viewer.send({
      type: 'ready',
      mode: viewer.mode,
      runId: this.runId,
      stageId: this.stageId,
      attempt: this.attempt,
      url: this.stack.top.url,
      dialogTimeoutSeconds: this.options.dialogTimeoutSeconds,
    });
    if (this.stack.depth > 0) viewer.send({ type: 'popup', action: 'opened', url: this.stack.top.url, depth: this.stack.depth });
    // Only a picture of the page shown now: one of a popup that has since closed would mislead the first click.
    const picture = this.pictures.get(this.stack.top.sessionId);
    if (picture) viewer.sendFrame(picture.frame);
    for (const dialog of this.dialogs.current()) viewer.send(dialogMessage(dialog, viewer.mode));
    if (wasIdle) this.show();
  }

  leave(viewer: ViewerPort): void {
    if (!this.viewers.delete(viewer) || this.ended || this.viewers.size > 0) return;
    // Nobody watches: no pictures, but dialogs are still tracked (and timed out) for a while.
    this.stopScreencast();
    this.lingerTimer = setTimeout(() => this.end('stage-ended', 'No one watches this stage any more.'), this.options.lingerMs);
  }

  /** A validated message from a viewer of this view. */
  handle(viewer: ViewerPort, message: LiveViewClientMessage): void {
    if (this.ended) return;
    if (viewer.mode !== 'interactive') {
      viewer.refuse('input_refused', 'This live view is view-only: the Host refuses its input. Ask for an interactive ticket to control the page.');
      return;
    }
    switch (message.type) {
      case 'dialog':
        // Ignored without an error when the dialog is gone or answered: someone was first.
        this.dialogs.answer(message.id, message.action, message.promptText);
        return;
      case 'reopen':
        void this.reopen(viewer);
        return;
      default:
        this.pageInput(viewer, message);
    }
  }

  /** Ends the view for everyone: an `ended` message, the sockets closed, the CDP connection closed. */
  end(reason: LiveViewEndReason, message: string): void {
    if (this.ended) return;
    this.ended = true;
    for (const viewer of [...this.viewers]) viewer.end(reason, message);
    this.viewers.clear();
    this.dispose();
  }

  /**
   * Ends the view because its tab or browser went. browser-host closes them on the same
   * events that end views (stage or run end), and can be quicker than the relay's event
   * tail: the event is given a moment to say why, and this reason is used only when none
   * comes.
   */
  private endSoon(reason: LiveViewEndReason, message: string): void {
    if (this.ended || this.tabGoneTimer) return;
    this.tabGoneTimer = setTimeout(() => this.end(reason, message), TAB_GONE_GRACE_MS);
  }

  /** Ends the view for its viewers of one mode (a gate answer ends the interactive ones). */
  endViewers(mode: LiveViewMode, reason: LiveViewEndReason, message: string): void {
    for (const viewer of [...this.viewers]) {
      if (viewer.mode !== mode) continue;
      viewer.end(reason, message);
      this.leave(viewer);
    }
  }

  private async start(): Promise<void> {
    const on = <T>(method: string, listener: (params: T, sessionId: string | undefined) => void): void => {
      this.offs.push(this.cdp.on<T>(method, (params, sessionId) => this.guard(method, () => listener(params, sessionId))));
    };
    on<AttachedEvent>('Target.attachedToTarget', (p, s) => s === undefined && this.onAttached(p));
    on<{ targetInfo: TargetInfo }>('Target.targetCreated', (p) => {
      if (p.targetInfo.type !== 'page' || !p.targetInfo.url) return;
      this.createdUrls.set(p.targetInfo.targetId, p.targetInfo.url);
      // Bounded: a page we never hear of again must not stay here.
      if (this.createdUrls.size > 64) this.createdUrls.delete(this.createdUrls.keys().next().value as string);
    });
    on<{ targetInfo: TargetInfo }>('Target.targetInfoChanged', (p) => this.onTargetInfo(p.targetInfo));
    on<{ targetId: string }>('Target.targetDestroyed', (p) => this.onGone(p.targetId));
    on<{ sessionId: string; targetId: string }>('Target.detachedFromTarget', (p, s) => s === undefined && this.onGone(p.targetId, p.sessionId));
    on<{ url: string }>('Page.windowOpen', (p, s) => {
      if (this.stack.bySession(s)) this.stack.windowOpened(p.url, this.now());
    });
    on<ScreencastFrameEvent>('Page.screencastFrame', (p, s) => s && this.onFrame(p, s));
    on<DialogOpening>('Page.javascriptDialogOpening', (p, s) => {
      const page = this.stack.bySession(s);
      if (!page) return;
      // Page text, bounded; viewers show it as plain text.
      const defaultPrompt = p.defaultPrompt === undefined ? undefined : String(p.defaultPrompt).slice(0, LIVE_VIEW_LIMITS.maxPromptChars);
      this.dialogs.opened(page.sessionId, { type: p.type, message: String(p.message).slice(0, MAX_DIALOG_TEXT), defaultPrompt, url: String(p.url ?? page.url).slice(0, 8192) });
    });
    on<{ result: boolean }>('Page.javascriptDialogClosed', (p, s) => {
      if (this.stack.bySession(s)) this.dialogs.pageClosed(s as string, p.result);
    });
    this.offs.push(this.cdp.onClose(() => this.endSoon('browser-gone', 'The stage\'s browser closed or stopped answering.')));

    const urlAtOpen = this.stack.root.url;
    await this.preparePage(this.stack.root.sessionId);
    await this.cdp.send('Target.setDiscoverTargets', { discover: true }, { timeoutMs: this.options.cdpTimeoutMs });
    // Chrome reports address changes (targetInfoChanged) only from here on: a navigation between open()'s
    // getTargetInfo and now (a stage's first goto, as Watch browser opens) would leave the view's address
    // behind for good. Read it again, unless an event has already brought a newer one.
    const now = await this.cdp
      .send<{ targetInfo: TargetInfo }>('Target.getTargetInfo', { targetId: this.stack.root.targetId }, { timeoutMs: this.options.cdpTimeoutMs })
      .catch(() => undefined);
    if (now && this.stack.root.url === urlAtOpen) this.onTargetInfo(now.targetInfo);
    // Browser-wide, pages only: every new page waits for us before its first script (see the class comment).
    await this.cdp.send(
      'Target.setAutoAttach',
      { autoAttach: true, waitForDebuggerOnStart: true, flatten: true, filter: [{ type: 'page', exclude: false }] },
      { timeoutMs: this.options.cdpTimeoutMs },
    );
  }

  /** Page events on: dialogs, popups' `windowOpen`. Best effort: a page behind a dialog answers nothing. */
  private async preparePage(sessionId: string): Promise<void> {
    await this.cdp.send('Page.enable', {}, { sessionId, timeoutMs: this.options.cdpTimeoutMs }).catch((error: Error) =>
      this.deps.log.warn?.({ msg: `Page events are off for a page of the view: ${error.message}`, ...this.ids() }),
    );
  }

  private onAttached(event: AttachedEvent): void {
    const { sessionId, waitingForDebugger } = event;
    const createdUrl = this.createdUrls.get(event.targetInfo.targetId);
    this.createdUrls.delete(event.targetInfo.targetId);
    const targetInfo = { ...event.targetInfo, url: event.targetInfo.url || createdUrl || '' };
    const resumeAndDetach = (delayMs = 0): void => {
      const resume = waitingForDebugger
        ? sleep(delayMs).then(() => this.cdp.send('Runtime.runIfWaitingForDebugger', {}, { sessionId }))
        : Promise.resolve();
      void resume
        .catch(() => undefined)
        .then(() => this.cdp.send('Target.detachFromTarget', { sessionId }))
        .catch(() => undefined);
    };
    if (this.attaching.has(targetInfo.targetId)) {
      // Our own attach reports itself too (never paused); a paused one is the auto-attach of the same new page.
      if (waitingForDebugger) resumeAndDetach();
      return;
    }
    const known = this.stack.byTarget(targetInfo.targetId);
    if (known) {
      if (known.sessionId !== sessionId) resumeAndDetach();
      return;
    }
    if (targetInfo.type === 'page' && this.stack.isPopup(targetInfo, this.now())) {
      void this.adoptPopup({ targetId: targetInfo.targetId, sessionId, url: targetInfo.url }, waitingForDebugger);
      return;
    }
    if (targetInfo.type === 'page' && targetInfo.openerId === undefined && this.stack.awaitsOpen(this.now()) && !targetInfo.url) {
      // Maybe the page a Ctrl- or middle-click opened: decided when its address is known.
      this.maybePopups.set(targetInfo.targetId, { sessionId, until: this.now() + WINDOW_OPEN_MATCH_MS });
      if (waitingForDebugger) void this.cdp.send('Runtime.runIfWaitingForDebugger', {}, { sessionId }).catch(() => undefined);
      return;
    }
    // Chrome starts a paused page at the first client's resume, and detaching does not
    // start it. A popup of a page another view shows (another stage's tab of the same
    // browser) is that view's to prepare (dialog events on before its scripts run):
    // resuming it at once here would race it. So this view waits a little, and resumes
    // it only if nobody has (an owner that is gone must not leave the page paused).
    resumeAndDetach(targetInfo.openerId !== undefined ? FOREIGN_POPUP_RESUME_DELAY_MS : 0);
  }

  private async adoptPopup(page: ViewedPage, paused: boolean): Promise<void> {
    this.stack.push(page);
    // Page events before its first script runs: a dialog on load is caught.
    await this.preparePage(page.sessionId);
    if (paused) await this.cdp.send('Runtime.runIfWaitingForDebugger', {}, { sessionId: page.sessionId }).catch(() => undefined);
    if (this.ended || this.stack.top !== page) return;
    this.forEachViewer((viewer) => viewer.send({ type: 'popup', action: 'opened', url: page.url, depth: this.stack.depth }));
    this.show();
  }

  private onTargetInfo(info: TargetInfo): void {
    const maybe = this.maybePopups.get(info.targetId);
    if (maybe) {
      if (!info.url) return;
      this.maybePopups.delete(info.targetId);
      if (maybe.until > this.now() && this.stack.isPopup({ targetId: info.targetId, url: info.url }, this.now())) {
        void this.adoptPopup({ targetId: info.targetId, sessionId: maybe.sessionId, url: info.url }, false);
      } else {
        void this.cdp.send('Target.detachFromTarget', { sessionId: maybe.sessionId }).catch(() => undefined);
      }
      return;
    }
    if (this.stack.setUrl(info.targetId, info.url) && this.stack.top.targetId === info.targetId) {
      this.forEachViewer((viewer) => viewer.send({ type: 'url', url: info.url }));
    }
  }

  private onGone(targetId: string, sessionId?: string): void {
    this.maybePopups.delete(targetId);
    const page = this.stack.byTarget(targetId);
    if (!page || (sessionId !== undefined && page.sessionId !== sessionId)) return;
    if (page === this.stack.root) {
      if (this.reopening) return;
      this.endSoon('tab-closed', 'The stage\'s tab was closed.');
      return;
    }
    this.dialogs.pageGone(page.sessionId);
    this.input.dropSession(page.sessionId);
    this.pictures.delete(page.sessionId);
    if (this.stack.remove(targetId)) {
      // Back to the page that opened it.
      this.forEachViewer((viewer) => viewer.send({ type: 'popup', action: 'closed', url: this.stack.top.url, depth: this.stack.depth }));
      this.show();
    }
  }

  private onFrame(event: ScreencastFrameEvent, sessionId: string): void {
    this.ack(sessionId, event.sessionId);
    if (sessionId !== this.screencastSession || sessionId !== this.stack.top.sessionId) return;
    const { deviceWidth, deviceHeight, offsetTop, pageScaleFactor, scrollOffsetX, scrollOffsetY } = event.metadata;
    this.publish(sessionId, { jpeg: Buffer.from(event.data, 'base64'), meta: { deviceWidth, deviceHeight, offsetTop, pageScaleFactor, scrollOffsetX, scrollOffsetY } });
  }

  /** Acks at once, but no sooner than the frame interval after the last ack: Chrome sends the next frame after the ack. */
  private ack(sessionId: string, frame: number): void {
    const send = (): void => {
      this.ackTimer = undefined;
      this.lastAckAt = this.now();
      void this.cdp.send('Page.screencastFrameAck', { sessionId: frame }, { sessionId }).catch(() => undefined);
    };
    const wait = this.lastAckAt + this.options.minFrameIntervalMs - this.now();
    if (this.ackTimer) clearTimeout(this.ackTimer);
    if (wait <= 0) send();
    else this.ackTimer = setTimeout(send, wait);
  }

  private publish(sessionId: string, frame: Frame): void {
    this.pictures.set(sessionId, { frame, version: (this.pictures.get(sessionId)?.version ?? 0) + 1 });
    if (sessionId === this.stack.top.sessionId) this.forEachViewer((viewer) => viewer.sendFrame(frame));
  }

  /**
   * Shows the top page: its address and last known picture at once, then a fresh
   * picture and its screencast in the background. Nothing here waits for the page: a
   * popup behind a dialog answers nothing, and the view must be able to move on.
   */
  private show(): void {
    if (this.ended || this.viewers.size === 0) return;
    const top = this.stack.top;
    if (this.screencastSession === top.sessionId) return;
    this.stopScreencast();
    this.screencastSession = top.sessionId;
    const known = this.pictures.get(top.sessionId);
    this.forEachViewer((viewer) => {
      viewer.resetFrames();
      viewer.send({ type: 'url', url: top.url });
      if (known) viewer.sendFrame(known.frame);
    });
    void this.startPicture(top);
  }

  /** A screenshot (a static page sends no screencast frame), then the screencast, of a page still shown. */
  private async startPicture(page: ViewedPage): Promise<void> {
    const shown = (): boolean => !this.ended && this.screencastSession === page.sessionId && this.stack.top === page;
    try {
      if (!this.dialogs.blocks(page.sessionId)) {
        const version = this.pictures.get(page.sessionId)?.version ?? 0;
        const first = await this.screenshot(page.sessionId).catch(() => undefined);
        if (first && shown() && (this.pictures.get(page.sessionId)?.version ?? 0) === version) this.publish(page.sessionId, first);
      }
      if (!shown()) return;
      await this.cdp
        .send('Page.startScreencast', SCREENCAST, { sessionId: page.sessionId, timeoutMs: this.options.cdpTimeoutMs })
        .catch((error: Error) => {
          // Restarted after a dialog: it was running already, which is what we want.
          if (!/already active/i.test(error.message)) throw error;
        });
      // Shown elsewhere meanwhile: this page's screencast would run for nobody.
      if (!shown()) void this.cdp.send('Page.stopScreencast', {}, { sessionId: page.sessionId }).catch(() => undefined);
    } catch (error) {
      if (shown() && !this.dialogs.blocks(page.sessionId)) {
        this.deps.log.warn?.({ msg: `Could not start the picture of the page: ${(error as Error).message}`, ...this.ids() });
      }
    }
  }

  private stopScreencast(): void {
    const previous = this.screencastSession;
    this.screencastSession = undefined;
    if (previous) void this.cdp.send('Page.stopScreencast', {}, { sessionId: previous, timeoutMs: this.options.cdpTimeoutMs }).catch(() => undefined);
  }

  /** The first picture of a page (a static page sends no screencast frame), with its geometry. */
  private async screenshot(sessionId: string): Promise<Frame | undefined> {
    const on = { sessionId, timeoutMs: this.options.cdpTimeoutMs };
    const metrics = await this.cdp.send<{ cssVisualViewport: { pageX: number; pageY: number; scale: number } }>('Page.getLayoutMetrics', {}, on);
    const { data } = await this.cdp.send<{ data: string }>('Page.captureScreenshot', { format: 'jpeg', quality: LIVE_VIEW_LIMITS.jpegQuality }, on);
    const dpr = await this.cdp
      .send<{ result: { value?: unknown } }>('Runtime.evaluate', { expression: 'window.devicePixelRatio', returnByValue: true }, on)
      .then((r) => (typeof r.result.value === 'number' && r.result.value > 0 ? r.result.value : 1));
    const jpeg = Buffer.from(data, 'base64');
    const size = jpegSize(jpeg);
    if (!size) return undefined;
    const vv = metrics.cssVisualViewport;
    return {
      jpeg,
      meta: {
        deviceWidth: size.width / dpr,
        deviceHeight: size.height / dpr,
        offsetTop: 0,
        pageScaleFactor: vv.scale || 1,
        scrollOffsetX: vv.pageX,
        scrollOffsetY: vv.pageY,
      },
    };
  }

  private pageInput(viewer: ViewerPort, message: Exclude<LiveViewClientMessage, { type: 'dialog' | 'reopen' }>): void {
    const top = this.stack.top;
    if (this.dialogs.blocks(top.sessionId)) {
      viewer.refuse('dialog_open', 'The page waits for its dialog: answer it (Accept or Dismiss) first.');
      return;
    }
    let commands: InputCommand[];
    if (message.type === 'key') commands = keyCommands(message);
    else if (message.type === 'text') commands = pasteCommands(message.text);
    else {
      // The geometry of this page's own picture: a point on another page's would land in the wrong place.
      const meta = this.pictures.get(top.sessionId)?.frame.meta;
      if (!meta) {
        viewer.refuse('input_failed', 'The picture of this page is not there yet; click again in a moment.');
        return;
      }
      commands = message.type === 'mouse' ? mouseCommands(message, meta) : wheelCommands(message, meta);
    }
    if (message.type === 'mouse' && opensWithoutOpener(message)) this.stack.openerlessClick(this.now());
    const queued = this.input.push({ sessionId: top.sessionId, commands, move: message.type === 'mouse' && message.action === 'move' });
    if (!queued) viewer.refuse('input_rate_limited', 'The page is behind on input; wait a moment and try again.');
  }

  private async reopen(viewer: ViewerPort): Promise<void> {
    const wait = this.lastReopenAt + LIVE_VIEW_LIMITS.reopenIntervalMs - this.now();
    if (this.reopening || wait > 0) {
      viewer.refuse('reopen_too_soon', `The tab is being reopened or was just reopened; try again in ${Math.max(1, Math.ceil(wait / 1000))} s.`);
      return;
    }
    this.reopening = true;
    this.lastReopenAt = this.now();
    try {
      const reopened = await this.deps.reopen(this.sessionId);
      if (this.ended) return;
      this.attaching.add(reopened.targetId);
      let sessionId: string;
      try {
        sessionId = await this.cdp.attachToTab(reopened.targetId, { timeoutMs: this.options.cdpTimeoutMs });
      } finally {
        this.attaching.delete(reopened.targetId);
      }
      const left = this.stack.replaceRoot({ targetId: reopened.targetId, sessionId, url: reopened.url });
      for (const page of left) {
        this.pictures.delete(page.sessionId);
        this.dialogs.pageGone(page.sessionId);
        this.input.dropSession(page.sessionId);
        void this.cdp.send('Target.detachFromTarget', { sessionId: page.sessionId }).catch(() => undefined);
      }
      this.screencastSession = undefined;
      await this.preparePage(sessionId);
      this.forEachViewer((v) => v.send({ type: 'reopened', url: reopened.url }));
      this.deps.log.log?.({ msg: 'Moved the live view to the reopened tab', ...this.ids() });
      this.show();
    } catch (error) {
      const code = (error as { code?: string }).code === 'reopen_too_soon' ? 'reopen_too_soon' : 'reopen_failed';
      viewer.refuse(code, `The tab could not be reopened: ${(error as Error).message}`);
    } finally {
      this.reopening = false;
    }
  }

  private forEachViewer(fn: (viewer: ViewerPort) => void): void {
    for (const viewer of this.viewers) fn(viewer);
  }

  /** A listener's failure must not stop the CDP message loop or the other listeners. */
  private guard(method: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.deps.log.error?.({ msg: `Handling ${method} failed: ${(error as Error).message}`, ...this.ids() });
    }
  }

  private ids(): Record<string, unknown> {
    return { runId: this.runId, stageId: this.stageId, attempt: this.attempt, sessionId: this.sessionId };
  }

  private dispose(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    if (this.tabGoneTimer) clearTimeout(this.tabGoneTimer);
    if (this.ackTimer) clearTimeout(this.ackTimer);
    for (const off of this.offs) off();
    this.dialogs.dispose();
    this.input.close();
    void this.cdp.close();
    this.deps.onEnded(this);
  }
}

/** How long a view leaves a popup of another view's page paused before it resumes it itself (see `onAttached`). */
const FOREIGN_POPUP_RESUME_DELAY_MS = 2000;

/** How long a view whose tab or browser went waits for the stage's or run's end to give the reason, before it says `tab-closed` or `browser-gone`. */
const TAB_GONE_GRACE_MS = 1500;

/** A click that makes Chrome open the link in a new tab or window, with no opener. */
function opensWithoutOpener(message: LiveViewMouseMessage): boolean {
  if (message.action !== 'click' && message.action !== 'up') return false;
  if (message.button === 'middle') return true;
  return (message.button ?? 'left') === 'left' && (message.modifiers ?? []).some((m) => m === 'Control' || m === 'Meta' || m === 'Shift');
}

function dialogMessage(dialog: ShownDialog, mode: LiveViewMode): LiveViewServerMessage {
  return {
    type: 'dialog',
    ...dialog,
    canAnswer: mode === 'interactive' && !dialog.autoAccepted,
    waitsFor: dialog.autoAccepted ? 'nobody' : 'operator',
  };
}
