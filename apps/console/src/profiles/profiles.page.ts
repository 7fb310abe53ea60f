import { ApiError, apiPath } from '../api/api-client';
import type { ProfileCheckView, ProfileView } from '../api/api.types';
import { h, replaceChildren } from '../dom/h';
import { formatTime } from '../format/format';
import { runHref } from '../router/routes';
import { errorBox } from '../shell/errors.view';
import type { AppContext, Page } from '../shell/page';
import { checkCell, checkFailure, type CheckProgress } from './profile-check';

/** The profile name rule (docs/profiles.md), checked before asking the api. */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The console's existing badge colours for each state of the "Last check" cell. */
const CHECK_CLASS = {
  logged_in: 'badge state-success',
  logged_out: 'badge state-failed',
  checking: 'badge state-running',
  never: 'muted',
  failed: 'error-text',
} as const;

/** Leases change when runs end; the browser host releases them a moment later, without an event. */
const POLL_MS = 10_000;

/**
 * `/profiles`: the Host's browser profiles with the run holding each and the
 * runs waiting; create and delete. Deleting a profile in use is refused by
 * the api (409 `profile_leased`): the refusal is shown with the runs it names.
 * "Check now" runs the profile's stored login check (`POST /api/profiles/:name/check`)
 * and shows the result, or the refusal (e.g. held by a run), in the profile's row.
 */
export function createProfilesPage(ctx: AppContext): Page {
  const errors = errorBox();
  const body = h('tbody');
  const empty = h('p', { class: 'muted', hidden: true }, 'No profiles yet. Create one below, or let a run create it at its first login.');
  const name = h('input', { name: 'name', required: true, maxlength: 64, pattern: PROFILE_NAME.source, 'aria-label': 'Profile name', placeholder: 'work' });
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  /** "Check now" per profile: running, or its last failure; kept across the reloads that redraw the rows. */
  const checks = new Map<string, CheckProgress>();
  let shown: ProfileView[] = [];

  const load = async () => {
    try {
      const profiles = await ctx.api.get<ProfileView[]>(apiPath('profiles'));
      empty.hidden = profiles.length > 0;
      shown = profiles;
      replaceChildren(body, profiles.map(row));
    } catch (error) {
      errors.show(error);
    }
  };

  const row = (p: ProfileView): HTMLElement => {
    const holder = p.lease.holder;
    return h(
      'tr',
      { 'data-profile': p.name },
      h('td', null, p.name),
      h('td', null, p.scope),
      h('td', { title: p.createdAt }, formatTime(p.createdAt)),
      h(
        'td',
        { 'data-testid': 'holder' },
        holder?.check
          ? h('span', { class: 'muted' }, `a login check, since ${formatTime(holder.since)}`)
          : holder
            ? [h('a', { href: runHref(holder.runId) }, holder.runId), h('span', { class: 'muted' }, ` since ${formatTime(holder.since)}`)]
            : h('span', { class: 'muted' }, 'free'),
      ),
      h(
        'td',
        null,
        p.lease.waiters.length === 0
          ? h('span', { class: 'muted' }, 'none')
          : h(
              'ol',
              { class: 'waiters' },
              p.lease.waiters.map((w) => h('li', null, h('a', { href: runHref(w.runId) }, w.runId), h('span', { class: 'muted' }, ` since ${formatTime(w.since)}`))),
            ),
      ),
      lastCheckCell(p),
      h(
        'td',
        { class: 'buttons' },
        h(
          'button',
          {
            type: 'button',
            'data-testid': `profile-check-${p.name}`,
            disabled: checks.get(p.name)?.running === true,
            title: p.check ? `Opens ${p.check.url} with this profile (headless) and judges the login` : 'No login check is set for this profile yet',
            on: { click: () => void checkNow(p.name) },
          },
          'Check now',
        ),
        h('button', { type: 'button', class: 'danger', on: { click: () => void remove(p.name) } }, 'Delete'),
      ),
    );
  };

  const lastCheckCell = (p: ProfileView): HTMLElement => {
    const cell = checkCell(p.lastCheck, checks.get(p.name));
    return h(
      'td',
      { 'data-testid': `profile-check-result-${p.name}`, 'data-state': cell.state, role: cell.state === 'failed' ? 'status' : null, title: cell.url ?? null },
      h('span', { class: CHECK_CLASS[cell.state] }, cell.text),
      cell.at ? h('span', { class: 'muted' }, ` at ${formatTime(cell.at)}`) : null,
    );
  };

  /** Redraws one row from what the page last read, without asking the api. */
  const redraw = (profile: string, lastCheck?: ProfileCheckView) => {
    shown = shown.map((p) => (p.name === profile && lastCheck ? { ...p, lastCheck } : p));
    replaceChildren(body, shown.map(row));
  };

  const checkNow = async (profile: string) => {
    errors.clear();
    checks.set(profile, { running: true });
    redraw(profile);
    try {
      const result = await ctx.api.post<ProfileCheckView>(apiPath('profiles', profile, 'check'), {});
      checks.delete(profile);
      redraw(profile, result);
    } catch (error) {
      checks.set(profile, { running: false, error: checkFailure(error) });
      redraw(profile);
      errors.show(error, ...leaseDetails(error));
    }
    if (!disposed) await load();
  };

  const remove = async (profile: string) => {
    if (!confirm(`Delete the profile ${profile} and its saved login? This cannot be undone.`)) return;
    errors.clear();
    try {
      await ctx.api.delete(apiPath('profiles', profile));
    } catch (error) {
      errors.show(error, ...leaseDetails(error));
    }
    await load();
  };

  const create = async () => {
    errors.clear();
    if (!PROFILE_NAME.test(name.value)) {
      return errors.show(new Error('A profile name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.'));
    }
    try {
      await ctx.api.post(apiPath('profiles'), { name: name.value });
      name.value = '';
    } catch (error) {
      errors.show(error);
    }
    await load();
  };

  const element = h(
    'section',
    { class: 'profiles-page' },
    h(
      'section',
      { class: 'card' },
      h('h1', null, 'Browser profiles'),
      h('p', { class: 'muted' }, 'A profile is a saved browser login on this Host. One run at a time holds it; other runs that need it wait in line.'),
      errors.element,
      h(
        'table',
        { 'data-testid': 'profiles-table' },
        h('thead', null, h('tr', null, h('th', null, 'Name'), h('th', null, 'Scope'), h('th', null, 'Created'), h('th', null, 'Held by'), h('th', null, 'Waiting'), h('th', null, 'Last check'), h('th'))),
        body,
      ),
      empty,
      h('div', { class: 'buttons' }, h('button', { type: 'button', on: { click: () => void load() } }, 'Refresh')),
      h(
        'p',
        { class: 'muted' },
        '“Check now” opens the profile’s login check page in a headless browser and says whether it is still logged in; ' +
          'it is refused while a run holds the profile. Set a profile’s check with PUT /api/profiles/<name>/check.',
      ),
    ),
    h(
      'form',
      {
        class: 'card',
        'data-testid': 'create-profile',
        on: {
          submit: (event) => {
            event.preventDefault();
            void create();
          },
        },
      },
      h('h2', null, 'Create a profile'),
      h('p', { class: 'muted' }, 'The profile starts empty; the first run that uses it logs in through its human login stage.'),
      h('div', { class: 'row' }, h('label', null, 'Name ', name), h('button', { type: 'submit', class: 'primary' }, 'Create')),
    ),
  );

  // Runs starting and ending move leases: read again shortly after, and every little while.
  const unsubscribe = ctx.socket.subscribeAll({
    onEvent: (event) => {
      if (event.type !== 'run.state' && event.type !== 'stage.state') return;
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(() => void load(), 1000);
    },
  });
  const poll = setInterval(() => void load(), POLL_MS);
  void load();

  return {
    title: 'Profiles',
    element,
    dispose: () => {
      disposed = true;
      unsubscribe();
      clearInterval(poll);
      clearTimeout(refreshTimer);
    },
  };
}

/** The runs a `profile_leased` refusal names, as links. */
function leaseDetails(error: unknown): Node[] {
  if (!(error instanceof ApiError) || error.code !== 'profile_leased' || typeof error.details !== 'object' || error.details === null) return [];
  const details = error.details as { holder?: unknown; waiters?: unknown };
  const holder = typeof details.holder === 'string' ? details.holder : (details.holder as { runId?: unknown } | undefined)?.runId;
  const waiters = Array.isArray(details.waiters)
    ? details.waiters.map((w) => (typeof w === 'string' ? w : (w as { runId?: unknown })?.runId)).filter((w): w is string => typeof w === 'string')
    : [];
  const out: Node[] = [];
  if (typeof holder === 'string') out.push(h('p', null, 'Held by run ', h('a', { href: runHref(holder) }, holder), '. Wait for it to end, or cancel it.'));
  if (waiters.length) out.push(h('p', null, 'Waiting: ', ...waiters.flatMap((w, i) => [i ? ', ' : '', h('a', { href: runHref(w) }, w)])));
  return out;
}
