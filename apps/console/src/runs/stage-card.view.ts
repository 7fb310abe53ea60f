import { isTerminalStageState } from '@stageflow/contracts';
import type { ApiClient } from '../api/api-client';
import { append, h, replaceChildren, setText } from '../dom/h';
import { durationBetween, formatDuration, prettyJson } from '../format/format';
import { createLiveView, type LiveViewHandle } from '../live-view';
import { stateBadge } from '../shell/state-badge.view';
import { canWatchBrowser, type StageModel } from './run.model';

/**
 * One stage of the run page: state and waiting reason, its log (appended as
 * `stage.log` events arrive), its envelope, and "Watch browser" while a
 * browser stage runs. Every text is set as text.
 */
export class StageCardView {
  readonly element: HTMLElement;
  private readonly badge = h('span');
  private readonly attempt = h('span', { class: 'muted' });
  private readonly duration = h('span', { class: 'muted' });
  private readonly reason = h('p', { class: 'reason' });
  private readonly answer = h('p', { class: 'gate-answer' });
  private readonly watchButton: HTMLButtonElement;
  private readonly watchBox = h('div', { class: 'watch' });
  private readonly logSummary = h('summary');
  private readonly log = h('pre', { class: 'log', 'data-testid': 'stage-log' });
  private readonly logs: HTMLDetailsElement;
  private readonly envelopeSummary = h('summary');
  private readonly envelopeBody = h('div');
  private readonly envelope: HTMLDetailsElement;
  private renderedLines = 0;
  private renderedDropped = 0;
  private lastAttempt = 0;
  private watch?: LiveViewHandle;
  private stage: StageModel;

  constructor(
    stage: StageModel,
    private readonly api: ApiClient,
  ) {
    this.stage = stage;
    this.watchButton = h('button', { type: 'button', 'data-testid': `watch-browser-${stage.id}`, on: { click: () => this.toggleWatch() } }, 'Watch browser');
    this.logs = h('details', { class: 'logs', open: ['running', 'failed', 'timed_out'].includes(stage.state) }, this.logSummary, this.log);
    this.envelope = h('details', { class: 'envelope' }, this.envelopeSummary, this.envelopeBody);
    this.element = h(
      'article',
      { class: 'card stage', id: `stage-${stage.id}`, 'data-stage': stage.id },
      h(
        'header',
        null,
        h('h3', null, stage.id),
        h('span', { class: 'kind' }, stage.kind),
        this.badge,
        this.attempt,
        stage.browser && h('span', { class: 'muted' }, stage.browser.profile ? `browser profile ${stage.browser.profile}` : 'throw-away browser'),
        this.duration,
      ),
      stage.description && h('p', { class: 'description' }, stage.description),
      this.reason,
      this.answer,
      stage.browser && h('div', { class: 'buttons' }, this.watchButton),
      this.watchBox,
      // A gate runs no command: it has no log to show.
      stage.kind !== 'gate' && this.logs,
      this.envelope,
    );
    this.update(stage);
  }

  update(stage: StageModel, now = Date.now()): void {
    this.stage = stage;
    this.element.dataset['state'] = stage.state;
    replaceChildren(this.badge, stateBadge(stage.state));
    setText(this.attempt, stage.maxAttempts > 1 || stage.attempt > 1 ? `attempt ${stage.attempt} of ${stage.maxAttempts}` : '');
    setText(this.duration, stage.startedAt ? durationBetween(stage.startedAt, stage.endedAt, now) : '');
    setText(this.reason, stage.reason ?? '');
    this.reason.hidden = !stage.reason;
    const answer = stage.gate?.answer;
    setText(this.answer, answer ? `${answer.decision === 'accept' ? 'Accepted' : 'Rejected'}${answer.note ? `: ${answer.note}` : ''}` : '');
    this.answer.hidden = !answer;
    // The relay ends the view when the stage ends (stage-ended); if the console learns it first, it ends the view
    // itself. Either way the last picture stays, with the reason, until the operator closes it.
    if (this.watch && isTerminalStageState(stage.state)) this.watch.end('The stage has ended, so its live view is closed.');
    this.watchButton.hidden = !canWatchBrowser(stage) && !this.watch;
    this.renderLog(stage);
    this.renderEnvelope(stage);
  }

  /** Durations of running stages grow without a new event. */
  tick(now: number): void {
    if (this.stage.startedAt && !this.stage.endedAt) setText(this.duration, durationBetween(this.stage.startedAt, undefined, now));
  }

  dispose(): void {
    this.watch?.dispose();
    this.watch = undefined;
  }

  private renderLog(stage: StageModel): void {
    if (stage.logsDropped !== this.renderedDropped || stage.logs.length < this.renderedLines) {
      replaceChildren(this.log);
      this.renderedLines = 0;
      this.lastAttempt = 0;
      this.renderedDropped = stage.logsDropped;
      if (stage.logsDropped) append(this.log, h('span', { class: 'muted' }, `(${stage.logsDropped} earlier lines are not shown)\n`));
    }
    if (stage.logs.length === this.renderedLines) return this.logSummaryText(stage);
    const atBottom = this.log.scrollTop + this.log.clientHeight >= this.log.scrollHeight - 4;
    const fragment = document.createDocumentFragment();
    for (const line of stage.logs.slice(this.renderedLines)) {
      if (line.attempt !== this.lastAttempt && (this.lastAttempt !== 0 || line.attempt > 1)) {
        append(fragment, h('span', { class: 'muted' }, `── attempt ${line.attempt} ──\n`));
      }
      this.lastAttempt = line.attempt;
      append(fragment, line.stream === 'stderr' ? h('span', { class: 'stderr' }, `${line.line}\n`) : `${line.line}\n`);
    }
    this.log.append(fragment);
    this.renderedLines = stage.logs.length;
    if (atBottom) this.log.scrollTop = this.log.scrollHeight;
    this.logSummaryText(stage);
  }

  private logSummaryText(stage: StageModel): void {
    const count = stage.logs.length + stage.logsDropped;
    setText(this.logSummary, count === 0 ? 'Log (no lines yet)' : `Log (${count} line${count === 1 ? '' : 's'})`);
  }

  private renderEnvelope(stage: StageModel): void {
    const env = stage.envelope;
    this.envelope.hidden = !env;
    if (!env) return;
    setText(this.envelopeSummary, `Envelope: ${env.ok ? 'ok' : 'failed'}, attempt ${env.attempt}, ${formatDuration(env.durationMs)}`);
    const text = prettyJson(env.output);
    if (this.envelopeBody.dataset['text'] === text + String(env.error) + env.artifacts.join('\n')) return;
    this.envelopeBody.dataset['text'] = text + String(env.error) + env.artifacts.join('\n');
    replaceChildren(
      this.envelopeBody,
      env.error && h('p', { class: 'error-text' }, env.error),
      h('p', { class: 'muted' }, 'Output'),
      h('pre', { class: 'json', 'data-testid': 'envelope-output' }, text),
      env.artifacts.length > 0 && h('p', { class: 'muted' }, `Artifacts named in the envelope: ${env.artifacts.join(', ')}`),
    );
  }

  private toggleWatch(): void {
    if (this.watch) return this.stopWatching();
    this.watch = createLiveView({ api: this.api, runId: this.stage.runId, stageId: this.stage.id, mode: 'view-only' });
    replaceChildren(this.watchBox, this.watch.element);
    setText(this.watchButton, 'Stop watching');
    this.watchButton.hidden = false;
  }

  private stopWatching(): void {
    this.watch?.dispose();
    this.watch = undefined;
    replaceChildren(this.watchBox);
    setText(this.watchButton, 'Watch browser');
    this.watchButton.hidden = !canWatchBrowser(this.stage);
  }
}
