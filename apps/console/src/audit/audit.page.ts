import { apiPath } from '../api/api-client';
import { AUDIT_RECORD_TYPES, type AuditPage, type AuditRecord } from '../api/api.types';
import { h, replaceChildren } from '../dom/h';
import { formatTime } from '../format/format';
import { routeHref, runHref } from '../router/routes';
import { errorBox } from '../shell/errors.view';
import type { AppContext, Page } from '../shell/page';
import { filtersFromQuery, filtersToQuery, isoToLocalInput, localInputToIso, type AuditFilters } from './audit-query';

/**
 * `/audit`: the browser-profile audit log, newest first, with the filters of
 * `GET /api/audit`. The filters live in the address, so a filtered view can
 * be shared and survives a reload.
 */
export function createAuditPage(ctx: AppContext, query: Record<string, string>): Page {
  const filters = filtersFromQuery(query);
  const errors = errorBox();
  const body = h('tbody');
  const empty = h('p', { class: 'muted', hidden: true }, 'No audit records match.');
  const more = h('button', { type: 'button', hidden: true, on: { click: () => void load(next) } }, 'Load older records');
  let next: string | undefined;

  const type = h('select', { name: 'type', 'aria-label': 'Type' }, h('option', { value: '' }, 'any type'), AUDIT_RECORD_TYPES.map((t) => h('option', { value: t }, t)));
  type.value = filters.type ?? '';
  const profile = h('input', { name: 'profile', 'aria-label': 'Profile', placeholder: 'profile', value: filters.profile ?? '' });
  const run = h('input', { name: 'run', 'aria-label': 'Run', placeholder: 'run id', value: filters.run ?? '' });
  const since = h('input', { name: 'since', type: 'datetime-local', 'aria-label': 'Since', value: isoToLocalInput(filters.since) });
  const until = h('input', { name: 'until', type: 'datetime-local', 'aria-label': 'Until', value: isoToLocalInput(filters.until) });
  const limit = h('input', { name: 'limit', type: 'number', min: 1, max: 1000, 'aria-label': 'Records per page', value: filters.limit ?? 100 });

  const load = async (cursor?: string) => {
    errors.clear();
    try {
      const page = await ctx.api.get<AuditPage>(apiPath('audit'), { ...filtersToQuery(filters), cursor });
      if (cursor === undefined) replaceChildren(body);
      body.append(...page.items.map(row));
      next = page.next;
      more.hidden = next === undefined;
      empty.hidden = body.childElementCount > 0;
    } catch (error) {
      errors.show(error);
    }
  };

  const apply = () => {
    const chosen: AuditFilters = {
      type: type.value || undefined,
      profile: profile.value.trim() || undefined,
      run: run.value.trim() || undefined,
      since: localInputToIso(since.value),
      until: localInputToIso(until.value),
      limit: limit.value ? Number(limit.value) : undefined,
    };
    ctx.router.go(routeHref({ name: 'audit', query: filtersToQuery(chosen) }));
  };

  const element = h(
    'section',
    { class: 'card audit-page' },
    h('h1', null, 'Audit log'),
    h('p', { class: 'muted' }, 'Profiles created, used and deleted, and what the soft allowlist check found. Records hold names and ids only.'),
    h(
      'form',
      {
        class: 'filters row',
        'data-testid': 'audit-filters',
        on: {
          submit: (event) => {
            event.preventDefault();
            apply();
          },
        },
      },
      h('label', null, 'Type ', type),
      h('label', null, 'Profile ', profile),
      h('label', null, 'Run ', run),
      h('label', null, 'Since ', since),
      h('label', null, 'Until ', until),
      h('label', null, 'Per page ', limit),
      h('button', { type: 'submit', class: 'primary' }, 'Filter'),
    ),
    errors.element,
    h(
      'table',
      { 'data-testid': 'audit-table' },
      h(
        'thead',
        null,
        h('tr', null, h('th', null, 'At'), h('th', null, 'Type'), h('th', null, 'Profile'), h('th', null, 'Scope'), h('th', null, 'Run'), h('th', null, 'Stage'), h('th', null, 'Detail')),
      ),
      body,
    ),
    empty,
    more,
  );
  void load();
  return { title: 'Audit', element, dispose: () => undefined };
}

function row(r: AuditRecord): HTMLElement {
  return h(
    'tr',
    { 'data-type': r.type },
    h('td', { title: r.at }, formatTime(r.at)),
    h('td', null, r.type),
    h('td', null, r.profile),
    h('td', null, r.scope),
    h('td', null, r.runId ? h('a', { href: runHref(r.runId) }, r.runId) : ''),
    h('td', null, r.stageId ?? ''),
    h('td', null, r.host ?? r.reason ?? r.result ?? r.browserData ?? ''),
  );
}
