import { Injectable } from '@nestjs/common';
import { CdpConnection } from '@stageflow/cdp';
import type { StageSession } from '@stageflow/contracts';
import type { KeyDefinition } from './press-keys';
import {
  PageScriptError,
  type NavigateResult,
  type ProbePurpose,
  type ProbeResult,
  type ReadResult,
  type StageTab,
  type StageTabConnector,
} from './stage-tab';

/** Chrome refuses captures past this many pixels a side. */
const MAX_CAPTURE_PX = 16_384;
/** Loader ids seen loading, kept for the current navigation; old ones are dropped. */
const MAX_LOADS_KEPT = 64;

interface EvaluateAnswer<T> {
  result?: { value?: T };
  exceptionDetails?: { text?: string; exception?: { description?: string } };
}

/**
 * The page-side half of an element lookup, run in the page. Selectors and
 * texts enter it only as JSON literals, never as code.
 */
function probeScript(selector: string, purpose: ProbePurpose): string {
  return `(() => {
  let el;
  try { el = document.querySelector(${JSON.stringify(selector)}); }
  catch (e) { return { state: 'invalid_selector', message: String(e && e.message || e) }; }
  if (!el) return { state: 'missing' };
  const purpose = ${JSON.stringify(purpose)};
  if (purpose === 'present') return { state: 'ready', x: 0, y: 0 };
  const describe = (n) => n ? n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') + (typeof n.className === 'string' && n.className.trim() ? '.' + n.className.trim().split(/\\s+/).join('.') : '') : 'nothing';
  if (purpose === 'click' || purpose === 'fill' || purpose === 'focus') el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  if (box.width === 0 || box.height === 0 || style.visibility === 'hidden' || style.display === 'none') return { state: 'hidden' };
  const x = box.left + box.width / 2;
  const y = box.top + box.height / 2;
  if (purpose === 'visible') return { state: 'ready', x, y };
  if (purpose === 'fill') {
    const tag = el.tagName.toLowerCase();
    const textInput = tag === 'input' && !['checkbox', 'radio', 'file', 'submit', 'button', 'image', 'reset', 'hidden', 'range', 'color'].includes(el.type);
    if (!textInput && tag !== 'textarea' && !el.isContentEditable) return { state: 'not_editable', tag: describe(el) };
    if (el.disabled) return { state: 'disabled' };
    if (el.readOnly) return { state: 'readonly' };
    el.focus();
    if (textInput || tag === 'textarea') el.select();
    else { const range = document.createRange(); range.selectNodeContents(el); const sel = getSelection(); sel.removeAllRanges(); sel.addRange(range); }
    return { state: 'ready', x, y };
  }
  if (purpose === 'focus') { el.focus(); return { state: 'ready', x, y }; }
  if (el.disabled) return { state: 'disabled' };
  const hit = document.elementFromPoint(x, y);
  if (!hit || !(hit === el || el.contains(hit))) return { state: 'covered', by: describe(hit) };
  return { state: 'ready', x, y };
})()`;
}

function readScript(selector: string, attribute: string | undefined): string {
  return `(() => {
  let el;
  try { el = document.querySelector(${JSON.stringify(selector)}); }
  catch (e) { return { state: 'invalid_selector', message: String(e && e.message || e) }; }
  if (!el) return { state: 'missing' };
  const attribute = ${JSON.stringify(attribute ?? null)};
  if (attribute === null) return { state: 'ready', value: String(el.innerText ?? el.textContent ?? '').trim() };
  if (attribute === 'value' && typeof el.value === 'string') return { state: 'ready', value: el.value };
  const value = el.getAttribute(attribute);
  return value === null ? { state: 'no_attribute' } : { state: 'ready', value };
})()`;
}

/**
 * A {@link StageTab} over one CDP connection to the stage's browser, on a
 * flattened session attached to the stage's tab (`Target.attachToTarget`).
 * Page dialogs are answered at once so the tab never blocks: alert and
 * beforeunload accepted, confirm and prompt dismissed.
 */
export class CdpStageTab implements StageTab {
  private readonly loads = new Set<string>();

  private constructor(
    private readonly cdp: CdpConnection,
    private readonly sessionId: string,
    /** Headed browsers only paint the tab in front; headless ones paint every tab. */
    private readonly headed: boolean,
  ) {}

  static async open(session: StageSession, note: (line: string) => void): Promise<CdpStageTab> {
    const cdp = await CdpConnection.connect(session.cdpEndpoint, { connectTimeoutMs: 10_000, callTimeoutMs: 10_000 });
    try {
      const sessionId = await cdp.attachToTab(session.targetId);
      const tab = new CdpStageTab(cdp, sessionId, session.headedMode !== 'headless');
      cdp.on<{ name: string; loaderId: string }>('Page.lifecycleEvent', (params, from) => {
        if (from !== sessionId || params.name !== 'load') return;
        if (tab.loads.size >= MAX_LOADS_KEPT) tab.loads.clear();
        tab.loads.add(params.loaderId);
      });
      cdp.on<{ type: string }>('Page.javascriptDialogOpening', (params, from) => {
        if (from !== sessionId) return;
        const accept = params.type === 'alert' || params.type === 'beforeunload';
        const article = /^[aeiou]/.test(params.type) ? 'an' : 'a';
        note(`the page opened ${article} ${params.type} dialog; ${accept ? 'accepted' : 'dismissed'} it`);
        cdp.send('Page.handleJavaScriptDialog', { accept }, { sessionId }).catch(() => undefined);
      });
      await cdp.send('Page.enable', {}, { sessionId });
      await cdp.send('Page.setLifecycleEventsEnabled', { enabled: true }, { sessionId });
      // Pages in a background tab of a headed browser otherwise see no focus: focus events, :focus and typing would differ.
      await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: true }, { sessionId });
      return tab;
    } catch (error) {
      await cdp.close();
      throw error;
    }
  }

  async navigate(url: string, timeoutMs: number): Promise<NavigateResult> {
    const answer = await this.call<{ errorText?: string; loaderId?: string }>('Page.navigate', { url }, timeoutMs);
    return {
      ...(answer.errorText ? { errorText: answer.errorText } : {}),
      ...(answer.loaderId ? { loaderId: answer.loaderId } : {}),
    };
  }

  hasLoaded(loaderId: string): boolean {
    return this.loads.has(loaderId);
  }

  probe(selector: string, purpose: ProbePurpose, timeoutMs: number): Promise<ProbeResult> {
    return this.evaluate<ProbeResult>(probeScript(selector, purpose), timeoutMs);
  }

  async clickAt(x: number, y: number, timeoutMs: number): Promise<void> {
    const at = { x, y };
    await this.call('Input.dispatchMouseEvent', { type: 'mouseMoved', ...at }, timeoutMs);
    await this.call('Input.dispatchMouseEvent', { type: 'mousePressed', ...at, button: 'left', buttons: 1, clickCount: 1 }, timeoutMs);
    await this.call('Input.dispatchMouseEvent', { type: 'mouseReleased', ...at, button: 'left', buttons: 0, clickCount: 1 }, timeoutMs);
  }

  async insertText(text: string, timeoutMs: number): Promise<void> {
    await this.call('Input.insertText', { text }, timeoutMs);
  }

  async pressKey(key: KeyDefinition, timeoutMs: number): Promise<void> {
    const common = { key: key.key, code: key.code, windowsVirtualKeyCode: key.keyCode, nativeVirtualKeyCode: key.keyCode };
    // keyDown with text also sends the character (Enter's "\r" submits a form); rawKeyDown does not.
    await this.call(
      'Input.dispatchKeyEvent',
      key.text === undefined ? { type: 'rawKeyDown', ...common } : { type: 'keyDown', ...common, text: key.text, unmodifiedText: key.text },
      timeoutMs,
    );
    await this.call('Input.dispatchKeyEvent', { type: 'keyUp', ...common }, timeoutMs);
  }

  currentUrl(timeoutMs: number): Promise<string> {
    return this.evaluate<string>('location.href', timeoutMs);
  }

  showsText(text: string, timeoutMs: number): Promise<boolean> {
    return this.evaluate<boolean>(`!!document.body && document.body.innerText.includes(${JSON.stringify(text)})`, timeoutMs);
  }

  read(selector: string, attribute: string | undefined, timeoutMs: number): Promise<ReadResult> {
    return this.evaluate<ReadResult>(readScript(selector, attribute), timeoutMs);
  }

  async screenshot(fullPage: boolean, timeoutMs: number): Promise<Buffer> {
    if (this.headed) await this.call('Page.bringToFront', {}, timeoutMs);
    let params: Record<string, unknown> = { format: 'png' };
    if (fullPage) {
      const metrics = await this.call<{ cssContentSize?: { width: number; height: number }; contentSize?: { width: number; height: number } }>(
        'Page.getLayoutMetrics',
        {},
        timeoutMs,
      );
      const size = metrics.cssContentSize ?? metrics.contentSize ?? { width: 0, height: 0 };
      const width = Math.min(MAX_CAPTURE_PX, Math.max(1, Math.ceil(size.width)));
      const height = Math.min(MAX_CAPTURE_PX, Math.max(1, Math.ceil(size.height)));
      params = { ...params, captureBeyondViewport: true, clip: { x: 0, y: 0, width, height, scale: 1 } };
    }
    const { data } = await this.call<{ data: string }>('Page.captureScreenshot', params, timeoutMs);
    return Buffer.from(data, 'base64');
  }

  async close(): Promise<void> {
    await this.cdp.close();
  }

  private call<T = Record<string, unknown>>(method: string, params: object, timeoutMs: number): Promise<T> {
    return this.cdp.send<T>(method, params, { sessionId: this.sessionId, timeoutMs: Math.max(1, timeoutMs) });
  }

  private async evaluate<T>(expression: string, timeoutMs: number): Promise<T> {
    const answer = await this.call<EvaluateAnswer<T>>('Runtime.evaluate', { expression, returnByValue: true }, timeoutMs);
    if (answer.exceptionDetails) {
      const why = answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text ?? 'an exception';
      throw new PageScriptError(why.split('\n')[0]);
    }
    return answer.result?.value as T;
  }
}

/** Production {@link StageTabConnector}: CDP to the stage's tab in the browser browser-host handed out. */
@Injectable()
export class CdpStageTabConnector implements StageTabConnector {
  open(session: StageSession, note: (line: string) => void): Promise<StageTab> {
    return CdpStageTab.open(session, note);
  }
}
