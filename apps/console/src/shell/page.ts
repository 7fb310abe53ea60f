import type { ApiClient } from '../api/api-client';
import type { ApiSocket } from '../live/api-socket';
import type { Router } from '../router/router';

/** What every page gets: the api over REST, its event socket, navigation. */
export interface AppContext {
  api: ApiClient;
  socket: ApiSocket;
  router: Router;
}

/** A mounted page; `dispose` ends its subscriptions, timers and live views. */
export interface Page {
  element: HTMLElement;
  /** Shown in the tab title. */
  title: string;
  dispose(): void;
}
