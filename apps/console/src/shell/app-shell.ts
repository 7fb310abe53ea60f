import { ApiError } from '../api/api-client';
import type { ApiToken } from '../api/api-token';
import { h, replaceChildren, setText } from '../dom/h';
import type { SocketStatus } from '../live/api-socket';
import { createAuditPage } from '../audit/audit.page';
import { createProfilesPage } from '../profiles/profiles.page';
import type { Route } from '../router/routes';
import { createRunPage } from '../runs/run.page';
import { createRunsPage } from '../runs/runs.page';
import { errorText } from './errors.view';
import type { AppContext, Page } from './page';

const SOCKET_TEXT: Record<SocketStatus, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  stopped: 'offline',
};

/**
 * The frame around every page: navigation, the live-connection status, the
 * token. Until the api accepts this tab (its token, or none needed on a
 * loopback api without one), it shows the token form instead of a page.
 */
export class AppShell {
  private page?: Page;
  private started = false;
  private readonly main = h('main', { id: 'main' });
  private readonly socketStatus = h('span', { class: 'socket-status', 'data-testid': 'socket-status', title: 'Live updates from the api' });
  private readonly forget = h('button', { type: 'button', class: 'link', on: { click: () => this.forgetToken() } }, 'Forget token');
  private readonly nav: HTMLElement;

  constructor(
    private readonly root: HTMLElement,
    private readonly ctx: AppContext & { token: ApiToken },
  ) {
    this.nav = h(
      'nav',
      null,
      h('a', { href: '/', 'data-nav': 'runs' }, 'Runs'),
      h('a', { href: '/profiles', 'data-nav': 'profiles' }, 'Profiles'),
      h('a', { href: '/audit', 'data-nav': 'audit' }, 'Audit'),
    );
    replaceChildren(
      root,
      h('header', { class: 'top' }, h('a', { href: '/', class: 'brand' }, 'Stageflow'), this.nav, h('span', { class: 'spacer' }), this.socketStatus, this.forget),
      this.main,
    );
    ctx.socket.onStatus((status) => {
      setText(this.socketStatus, SOCKET_TEXT[status]);
      this.socketStatus.dataset['status'] = status;
    });
  }

  /** Checks that the api lets this tab in, then shows the page of the address bar. */
  async boot(message?: string): Promise<void> {
    const hadToken = this.ctx.token.get() !== undefined;
    this.forget.hidden = !hadToken;
    try {
      await this.ctx.api.get('/api/runs', { limit: 1 });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return this.askForToken(message ?? (hadToken ? 'The api refused this token.' : undefined));
      return this.showBootError(error);
    }
    this.ctx.socket.start();
    if (!this.started) {
      this.started = true;
      this.ctx.router.start((route) => this.show(route));
    } else this.show(this.ctx.router.current());
  }

  /** Any 401: the token is missing or was changed on the api. */
  askForToken(message?: string): void {
    this.ctx.socket.stop();
    this.page?.dispose();
    this.page = undefined;
    this.ctx.token.clear();
    this.forget.hidden = true;
    this.nav.hidden = true;
    const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, minlength: 16, 'aria-label': 'API token' });
    const form = h(
      'form',
      {
        class: 'token-form card',
        'data-testid': 'token-form',
        on: {
          submit: (event) => {
            event.preventDefault();
            this.ctx.token.set(input.value.trim());
            this.nav.hidden = false;
            void this.boot();
          },
        },
      },
      h('h1', null, 'Sign in to this Stageflow api'),
      h(
        'p',
        null,
        'Enter the api token (STAGEFLOW_API_TOKEN; the compose stack defaults to stageflow-dev-token-change-me). It is kept in this tab only (sessionStorage) and sent as a bearer token.',
      ),
      message && h('p', { class: 'error', role: 'alert' }, message),
      h('label', null, 'API token ', input),
      h('button', { type: 'submit', class: 'primary' }, 'Use token'),
    );
    replaceChildren(this.main, form);
    document.title = 'Sign in · Stageflow';
    input.focus();
  }

  private showBootError(error: unknown): void {
    replaceChildren(
      this.main,
      h(
        'div',
        { class: 'card error', role: 'alert' },
        h('p', null, `The console cannot reach the api: ${errorText(error)}`),
        h('button', { type: 'button', on: { click: () => void this.boot() } }, 'Try again'),
      ),
    );
  }

  private show(route: Route): void {
    this.page?.dispose();
    this.nav.hidden = false;
    for (const link of this.nav.querySelectorAll('a')) {
      const active = link.dataset['nav'] === (route.name === 'run' ? 'runs' : route.name);
      if (active) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    this.page = this.create(route);
    replaceChildren(this.main, this.page.element);
    document.title = `${this.page.title} · Stageflow`;
  }

  private create(route: Route): Page {
    switch (route.name) {
      case 'runs':
        return createRunsPage(this.ctx);
      case 'run':
        return createRunPage(this.ctx, route.runId);
      case 'profiles':
        return createProfilesPage(this.ctx);
      case 'audit':
        return createAuditPage(this.ctx, route.query);
      case 'not-found':
        return {
          title: 'Not found',
          element: h('section', { class: 'card' }, h('h1', null, 'No such page'), h('p', null, `The console has no page at ${route.path}. `, h('a', { href: '/' }, 'Go to the runs.'))),
          dispose: () => undefined,
        };
    }
  }

  private forgetToken(): void {
    this.askForToken('Token forgotten. Enter it again to continue.');
  }
}
