import { isTerminalRunState } from '@stageflow/contracts';
import { apiPath } from '../api/api-client';
import type { RunPage } from '../api/api.types';
import { h, replaceChildren, setText } from '../dom/h';
import { durationBetween, formatTime } from '../format/format';
import { runHref } from '../router/routes';
import { errorBox } from '../shell/errors.view';
import type { AppContext, Page } from '../shell/page';
import { stateBadge } from '../shell/state-badge.view';
import { RunsListModel, type RunRow } from './runs-list.model';
import { startRunForm } from './start-run.form';

const PAGE_SIZE = 25;

/** `/`: every run, newest first, kept current over the WebSocket; and a form to start one. */
export function createRunsPage(ctx: AppContext): Page {
  const model = new RunsListModel();
  const errors = errorBox();
  const body = h('tbody');
  const empty = h('p', { class: 'muted', hidden: true }, 'No runs yet. Start one above, or with POST /api/runs.');
  const more = h('button', { type: 'button', hidden: true, on: { click: () => void load(next) } }, 'Load older runs');
  const durations = new Map<string, { cell: HTMLElement; row: RunRow }>();
  let next: string | undefined;
  let scheduled = false;

  const element = h(
    'section',
    { class: 'runs-page' },
    startRunForm(ctx),
    h(
      'section',
      { class: 'card' },
      h('h1', null, 'Runs'),
      errors.element,
      h(
        'table',
        { class: 'runs', 'data-testid': 'runs-table' },
        h('thead', null, h('tr', null, h('th', null, 'Run'), h('th', null, 'Pipeline'), h('th', null, 'State'), h('th', null, 'Started'), h('th', null, 'Duration'))),
        body,
      ),
      empty,
      more,
    ),
  );

  const render = () => {
    scheduled = false;
    durations.clear();
    const rows = model.list();
    empty.hidden = rows.length > 0;
    replaceChildren(
      body,
      rows.map((row) => {
        const duration = h('td', { class: 'num' });
        durations.set(row.id, { cell: duration, row });
        return h(
          'tr',
          { 'data-run': row.id, 'data-state': row.state },
          h('td', null, h('a', { href: runHref(row.id) }, row.id)),
          h('td', null, row.pipeline),
          h('td', null, stateBadge(row.state, row.reason)),
          h('td', { title: row.createdAt }, formatTime(row.createdAt)),
          duration,
        );
      }),
    );
    tick();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  };
  // Durations of open runs grow every second without rebuilding the table.
  const tick = () => {
    const now = Date.now();
    for (const { cell, row } of durations.values()) setText(cell, durationBetween(row.createdAt, isTerminalRunState(row.state) ? (row.endedAt ?? row.updatedAt) : undefined, now));
  };
  const ticker = setInterval(tick, 1000);

  const load = async (cursor?: string) => {
    try {
      const page = await ctx.api.get<RunPage>(apiPath('runs'), { limit: PAGE_SIZE, cursor });
      model.mergePage(page.items);
      // Only the first page's `next` is replaced by a reload; older pages keep paging on.
      if (cursor !== undefined || next === undefined) next = page.next;
      more.hidden = next === undefined;
      errors.clear();
      schedule();
    } catch (error) {
      errors.show(error);
    }
  };

  let subscribedOnce = false;
  const unsubscribe = ctx.socket.subscribeAll({
    onEvent: (event) => {
      if (model.applyEvent(event)) schedule();
    },
    // Read the first page again once the stream is on: a run that changed
    // between the first read and the subscription is then current too.
    onSubscribed: () => {
      if (subscribedOnce) return;
      subscribedOnce = true;
      void load();
    },
  });
  void load();

  return {
    title: 'Runs',
    element,
    dispose: () => {
      unsubscribe();
      clearInterval(ticker);
    },
  };
}
