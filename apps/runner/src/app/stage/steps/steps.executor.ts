import { Inject, Injectable } from '@nestjs/common';
import { ArtifactStore, ArtifactTooLargeError } from '@stageflow/artifacts';
import { isCdpError } from '@stageflow/cdp';
import type { StageJobPayload, StageSession } from '@stageflow/contracts';
import { STEP_DEFAULT_TIMEOUT_SECONDS, type StepAction, type StepsStageDefinition } from '@stageflow/pipeline';
import { MAX_OUTPUT_BYTES } from '../stage-output';
import { keyDefinition } from './press-keys';
import { PageScriptError, STAGE_TAB_CONNECTOR, type ProbePurpose, type ProbeResult, type StageTab, type StageTabConnector } from './stage-tab';
import { urlMatches } from './url-pattern';

/** One attempt of a steps stage, on the tab its stage session opened. */
export interface StepsRun {
  job: StageJobPayload;
  stage: StepsStageDefinition;
  session: StageSession;
  /** Aborted when the attempt is stopped (timeout, cancel, shutdown): the current step ends at once. */
  signal: AbortSignal;
  /** One line per step, and per page dialog answered, for the stage's log. */
  log: (line: string) => void;
}

export type StepsOutcome =
  | { ok: true; output: Record<string, string>; artifacts: string[] }
  | { ok: false; error: string; artifacts: string[] };

/** How often a waiting step looks again. */
const POLL_MS = 100;
/** Bound on one browser round trip inside a step (the step's own timeout bounds the whole). */
const CALL_MS = 5000;
const MAX_SHOWN = 120;

/** A step that cannot go on; `message` says why in words, without the step's name. */
class StepProblem extends Error {}
/** The attempt was stopped from outside. */
class Stopped extends Error {}

/**
 * Runs the steps of a `steps` stage in order on the stage's tab: each step
 * waits (polling) for what it needs up to its own timeout, the first one
 * that fails ends the attempt with a reason naming the step, its action and
 * why. Extracted fields become the output; screenshots are stored as the
 * attempt's artifacts. The stage's overall timeout and cancels arrive as the
 * abort signal, which also closes the tab connection so no browser call
 * outlives the attempt.
 */
@Injectable()
export class StepsExecutor {
  constructor(
    @Inject(STAGE_TAB_CONNECTOR) private readonly connector: StageTabConnector,
    private readonly artifacts: ArtifactStore,
  ) {}

  async run(run: StepsRun): Promise<StepsOutcome> {
    const artifacts: string[] = [];
    const output: Array<[string, string]> = [];
    let tab: StageTab;
    try {
      tab = await this.connector.open(run.session, run.log);
    } catch (error) {
      return { ok: false, error: `could not attach to the stage's browser tab: ${(error as Error).message}`, artifacts };
    }
    const onAbort = (): void => void tab.close().catch(() => undefined);
    run.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const total = run.stage.steps.length;
      for (const [index, step] of run.stage.steps.entries()) {
        const n = index + 1;
        const label = describeStep(step);
        const started = Date.now();
        try {
          if (run.signal.aborted) throw new Stopped();
          const value = await this.step(tab, step, run, artifacts);
          if (step.action === 'extract' && value !== undefined) output.push([step.field, value]);
          run.log(`step ${n}/${total} ${label}: ok (${Date.now() - started} ms)`);
        } catch (error) {
          if (error instanceof Stopped || run.signal.aborted) {
            run.log(`step ${n}/${total} ${label}: stopped`);
            return { ok: false, error: 'stopped', artifacts };
          }
          const why = error instanceof StepProblem ? error.message : unexpected(error);
          run.log(`step ${n}/${total} ${label}: failed: ${why}`);
          return { ok: false, error: `step ${n} (${label}): ${why}`, artifacts };
        }
      }
      const fields = Object.fromEntries(output);
      if (Buffer.byteLength(JSON.stringify(fields)) > MAX_OUTPUT_BYTES) {
        return { ok: false, error: `the extracted fields are larger than ${MAX_OUTPUT_BYTES} bytes together; extract less text`, artifacts };
      }
      return { ok: true, output: fields, artifacts };
    } finally {
      run.signal.removeEventListener('abort', onAbort);
      await tab.close().catch(() => undefined);
    }
  }

  /** Runs one step; returns the extracted value for `extract`. Throws StepProblem or Stopped. */
  private async step(tab: StageTab, step: StepAction, run: StepsRun, artifacts: string[]): Promise<string | undefined> {
    const timeoutMs = (step.timeoutSeconds ?? STEP_DEFAULT_TIMEOUT_SECONDS[step.action]) * 1000;
    const deadline = Date.now() + timeoutMs;
    const after = `after ${seconds(timeoutMs)}`;
    const wait = <T>(check: (callMs: number) => Promise<T | { wait: string }>): Promise<T> => this.poll(deadline, after, run.signal, check);

    switch (step.action) {
      case 'goto': {
        const answer = await this.once(deadline, 'the page did not start loading', () => tab.navigate(step.url, left(deadline)));
        if (answer.errorText) throw new StepProblem(`the browser could not load it: ${answer.errorText}`);
        const loaderId = answer.loaderId;
        if (loaderId === undefined) return undefined;
        await wait(async () => (tab.hasLoaded(loaderId) ? true : { wait: 'the page did not finish loading' }));
        return undefined;
      }
      case 'click': {
        const at = await wait((callMs) => this.element(tab, step.selector, 'click', callMs));
        await this.once(deadline, 'the browser did not take the click', () => tab.clickAt(at.x, at.y, left(deadline)));
        return undefined;
      }
      case 'fill': {
        await wait((callMs) => this.element(tab, step.selector, 'fill', callMs));
        await this.once(deadline, 'the browser did not take the text', () =>
          step.value === '' ? tab.pressKey(keyDefinition('Backspace'), left(deadline)) : tab.insertText(step.value, left(deadline)),
        );
        return undefined;
      }
      case 'press': {
        const selector = step.selector;
        if (selector !== undefined) await wait((callMs) => this.element(tab, selector, 'focus', callMs));
        await this.once(deadline, 'the browser did not take the key', () => tab.pressKey(keyDefinition(step.key), left(deadline)));
        return undefined;
      }
      case 'wait_for': {
        if (step.condition === 'selector') {
          await wait((callMs) => this.element(tab, step.value, 'visible', callMs));
        } else if (step.condition === 'url') {
          let last = '';
          await wait(async (callMs) => {
            last = await tab.currentUrl(callMs);
            return urlMatches(step.value, last) ? true : { wait: `the URL is ${shown(last)}, which does not match ${shown(step.value)}` };
          });
        } else {
          await wait(async (callMs) => ((await tab.showsText(step.value, callMs)) ? true : { wait: `the page does not show ${shown(step.value)}` }));
        }
        return undefined;
      }
      case 'extract': {
        return wait(async (callMs) => {
          const read = await tab.read(step.selector, step.attribute, callMs);
          if (read.state === 'ready') return read.value;
          if (read.state === 'invalid_selector') throw new StepProblem(`the selector is not valid CSS: ${read.message}`);
          if (read.state === 'missing') return { wait: 'no element matches the selector' };
          return { wait: `the element has no attribute ${shown(step.attribute ?? '')}` };
        });
      }
      case 'screenshot': {
        const png = await this.once(deadline, 'the browser did not deliver the screenshot', () => tab.screenshot(step.fullPage, left(deadline)));
        try {
          await this.artifacts.write(run.job, step.name, png);
        } catch (error) {
          if (error instanceof ArtifactTooLargeError) throw new StepProblem(error.message);
          throw error;
        }
        artifacts.push(step.name);
        return undefined;
      }
    }
  }

  /** One lookup of the element: its centre when ready, what to wait for otherwise, a StepProblem when waiting cannot help. */
  private async element(
    tab: StageTab,
    selector: string,
    purpose: ProbePurpose,
    callMs: number,
  ): Promise<{ x: number; y: number } | { wait: string }> {
    const found: ProbeResult = await tab.probe(selector, purpose, callMs);
    switch (found.state) {
      case 'ready':
        return { x: found.x, y: found.y };
      case 'invalid_selector':
        throw new StepProblem(`the selector is not valid CSS: ${found.message}`);
      case 'not_editable':
        throw new StepProblem(`the element is not a text field (an input, textarea or contenteditable element) but ${found.tag}`);
      case 'missing':
        return { wait: 'no element matches the selector' };
      case 'hidden':
        return { wait: 'the element is not visible' };
      case 'covered':
        return { wait: `the element is covered by another element (${found.by})` };
      case 'disabled':
        return { wait: 'the element is disabled' };
      case 'readonly':
        return { wait: 'the element is read-only' };
    }
  }

  /**
   * Calls `check` until it returns a value (not `{wait}`), the deadline passes
   * (StepProblem: the last reason to wait, "after N s") or the attempt stops.
   * A browser call that fails while the page changes (a navigation in
   * flight) is retried; a closed browser connection is not.
   */
  private async poll<T>(
    deadline: number,
    after: string,
    signal: AbortSignal,
    check: (callMs: number) => Promise<T | { wait: string }>,
  ): Promise<T> {
    let reason = 'the page did not answer';
    for (;;) {
      if (signal.aborted) throw new Stopped();
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new StepProblem(`${reason} ${after}`);
      try {
        const result = await check(Math.min(remaining, CALL_MS));
        if (!isWait(result)) return result;
        reason = result.wait;
      } catch (error) {
        if (signal.aborted) throw new Stopped();
        if (isCdpError(error, 'cdp_closed')) throw new StepProblem(closedMessage());
        // A lookup that fails while a navigation replaces the document is retried.
        if (isCdpError(error, 'cdp_protocol_error') || error instanceof PageScriptError) reason = 'the page kept changing';
        else if (isCdpError(error, 'cdp_timeout')) reason = 'the page did not answer';
        else throw error;
      }
      await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), signal);
    }
  }

  /** One browser action, bounded by the step's deadline, with its failure in words. */
  private async once<T>(deadline: number, timeoutReason: string, action: () => Promise<T>): Promise<T> {
    if (deadline - Date.now() <= 0) throw new StepProblem(`${timeoutReason} in time`);
    try {
      return await action();
    } catch (error) {
      if (isCdpError(error, 'cdp_closed')) throw new StepProblem(closedMessage());
      if (isCdpError(error, 'cdp_timeout')) throw new StepProblem(`${timeoutReason} in time`);
      throw error;
    }
  }
}

function isWait(value: unknown): value is { wait: string } {
  return typeof value === 'object' && value !== null && typeof (value as { wait?: unknown }).wait === 'string';
}

function left(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function closedMessage(): string {
  return 'the connection to the browser closed (the browser or the stage\'s tab went away)';
}

function unexpected(error: unknown): string {
  if (isCdpError(error, 'cdp_protocol_error')) return `the browser refused it: ${error.message}`;
  return `it failed unexpectedly: ${(error as Error)?.message ?? String(error)}`;
}

/** Whole seconds as "10 s", fractions as "1.5 s". */
function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** A value for a message: quoted, and cut when long. */
function shown(value: string): string {
  return JSON.stringify(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value);
}

/**
 * The step as log lines and failure reasons name it: the action and its
 * target. A `fill` value is never shown (it may be a password).
 */
export function describeStep(step: StepAction): string {
  switch (step.action) {
    case 'goto':
      return `goto ${shown(step.url)}`;
    case 'click':
      return `click ${shown(step.selector)}`;
    case 'fill':
      return `fill ${shown(step.selector)}`;
    case 'press':
      return `press ${shown(step.key)}${step.selector === undefined ? '' : ` in ${shown(step.selector)}`}`;
    case 'wait_for':
      return `wait_for ${step.condition} ${shown(step.value)}`;
    case 'extract':
      return `extract ${shown(step.field)} from ${shown(step.selector)}${step.attribute === undefined ? '' : ` (attribute ${shown(step.attribute)})`}`;
    case 'screenshot':
      return `screenshot ${shown(step.name)}`;
  }
}
