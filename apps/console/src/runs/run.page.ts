import { isTerminalRunState } from '@stageflow/contracts';
import { ApiError, apiPath } from '../api/api-client';
import type { EventPage, RunView } from '../api/api.types';
import { h, replaceChildren, setText } from '../dom/h';
import { durationBetween, formatTime, prettyJson } from '../format/format';
import { errorBox, errorText } from '../shell/errors.view';
import type { AppContext, Page } from '../shell/page';
import { stateBadge } from '../shell/state-badge.view';
import { ArtifactsView } from './artifacts.view';
import { GatePanelView } from './gate-panel.view';
import { applyRunEvent, openGates, runModelFromView, type RunModel } from './run.model';
import { StageCardView } from './stage-card.view';
import { StageGraphView } from './stage-graph.view';

const HISTORY_PAGE = 1000;

/**
 * `/runs/:id`: the run's graph and stages, its gates, logs, envelopes and
 * artifacts. Built from the run view plus its whole event history, then kept
 * current by a run subscription that resumes after the last seq applied.
 */
export function createRunPage(ctx: AppContext, runId: string): Page {
  const element = h('section', { class: 'run-page', 'data-run': runId }, h('p', { class: 'muted' }, 'Loading the run…'));
  const cleanups: (() => void)[] = [];
  let disposed = false;

  const load = async () => {
    let view: RunView;
    try {
      view = await ctx.api.get<RunView>(apiPath('runs', runId));
    } catch (error) {
      const text = error instanceof ApiError && error.code === 'run_not_found' ? `There is no run ${runId}.` : `The run could not be read: ${errorText(error)}`;
      return replaceChildren(element, h('div', { class: 'card error', role: 'alert' }, h('p', null, text), h('a', { href: '/' }, 'Back to the runs')));
    }
    const model = runModelFromView(view);
    try {
      // The whole history, so states, logs, envelopes and answers are what the events say.
      for (;;) {
        const page = await ctx.api.get<EventPage>(apiPath('runs', runId, 'events'), { after: model.lastSeq, limit: HISTORY_PAGE });
        for (const event of page.items) applyRunEvent(model, event);
        if (page.items.length < HISTORY_PAGE) break;
      }
    } catch (error) {
      return replaceChildren(element, h('div', { class: 'card error', role: 'alert' }, h('p', null, `The run's history could not be read: ${errorText(error)}`)));
    }
    if (!disposed) mount(model);
  };

  const mount = (model: RunModel) => {
    const errors = errorBox();
    const badge = h('span');
    const reason = h('p', { class: 'reason' });
    const duration = h('dd');
    const ended = h('dd');
    const warnings = h('ul', { class: 'warnings' });
    const cancel = h('button', { type: 'button', class: 'danger', on: { click: () => void cancelRun() } }, 'Cancel run');
    const gates = h('div', { class: 'gates' });
    const stagesBox = h('div', { class: 'stages' });
    const artifacts = new ArtifactsView(runId, ctx.api);
    const cards = new Map<string, StageCardView>();
    const gatePanels = new Map<string, GatePanelView>();
    const graph = new StageGraphView(model, (stageId) => {
      const card = cards.get(stageId)?.element;
      card?.scrollIntoView({ behavior: 'smooth', block: 'start' });
      card?.classList.add('selected');
      setTimeout(() => card?.classList.remove('selected'), 1500);
    });

    const cancelRun = async () => {
      if (!confirm(`Cancel run ${runId}? Its running stages are stopped.`)) return;
      errors.clear();
      cancel.disabled = true;
      try {
        await ctx.api.post(apiPath('runs', runId, 'cancel'), {});
      } catch (error) {
        errors.show(error);
        cancel.disabled = false;
      }
    };

    for (const stage of model.stages) {
      const card = new StageCardView(stage, ctx.api);
      cards.set(stage.id, card);
      stagesBox.append(card.element);
    }

    replaceChildren(
      element,
      h(
        'section',
        { class: 'card run-head' },
        h('h1', null, 'Run ', h('code', null, model.id), ' ', badge),
        reason,
        h(
          'dl',
          null,
          h('dt', null, 'Pipeline'),
          h('dd', null, model.pipeline),
          h('dt', null, 'Started'),
          h('dd', { title: model.createdAt }, formatTime(model.createdAt)),
          h('dt', null, 'Duration'),
          duration,
          h('dt', null, 'Ended'),
          ended,
          h('dt', null, 'Active stages at most'),
          h('dd', null, model.maxActiveStages),
        ),
        h('details', { class: 'input' }, h('summary', null, 'Input'), h('pre', { class: 'json' }, prettyJson(model.input))),
        warnings,
        h('div', { class: 'buttons' }, cancel),
        errors.element,
      ),
      h('section', { class: 'card graph' }, h('h2', null, 'Stages'), h('div', { class: 'graph-scroll' }, graph.element)),
      gates,
      stagesBox,
      artifacts.element,
    );

    let scheduled = false;
    const render = () => {
      scheduled = false;
      replaceChildren(badge, stateBadge(model.state));
      element.dataset['state'] = model.state;
      setText(reason, model.reason ?? '');
      reason.hidden = !model.reason;
      setText(ended, model.endedAt ? formatTime(model.endedAt) : 'not yet');
      cancel.hidden = isTerminalRunState(model.state);
      replaceChildren(
        warnings,
        model.warnings.map((w) => h('li', { class: 'warning' }, `${w.message} (${w.code})`)),
      );
      graph.update(model);
      for (const stage of model.stages) cards.get(stage.id)?.update(stage);
      // Gates: a panel per waiting gate attempt, kept while it waits (its note and live view survive updates).
      const open = new Map(openGates(model).map((s) => [`${s.id}#${s.attempt}`, s]));
      for (const [key, panel] of gatePanels) {
        if (open.has(key)) continue;
        panel.dispose();
        panel.element.remove();
        gatePanels.delete(key);
      }
      for (const [key, stage] of open) {
        if (gatePanels.has(key)) continue;
        const panel = new GatePanelView(stage, ctx.api);
        gatePanels.set(key, panel);
        gates.append(panel.element);
      }
      tick();
    };
    const schedule = () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(render);
    };
    const tick = () => {
      const now = Date.now();
      setText(duration, durationBetween(model.createdAt, isTerminalRunState(model.state) ? (model.endedAt ?? model.updatedAt) : undefined, now));
      for (const card of cards.values()) card.tick(now);
    };
    const ticker = setInterval(tick, 1000);
    render();
    artifacts.refresh();

    const unsubscribe = ctx.socket.subscribeRun(runId, model.lastSeq, {
      onEvent: (event) => {
        if (!applyRunEvent(model, event)) return;
        schedule();
        if (event.type === 'stage.output' || (event.type === 'run.state' && isTerminalRunState(model.state))) artifacts.refresh();
      },
      onError: (code, message) => errors.show(new ApiError(0, code, `Live updates stopped: ${message}`)),
    });
    cleanups.push(unsubscribe, () => clearInterval(ticker), () => {
      for (const card of cards.values()) card.dispose();
      for (const panel of gatePanels.values()) panel.dispose();
    });
  };

  void load();
  return {
    title: `Run ${runId}`,
    element,
    dispose: () => {
      disposed = true;
      for (const cleanup of cleanups) cleanup();
    },
  };
}
