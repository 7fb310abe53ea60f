import { ApiClient } from './api/api-client';
import { ApiToken } from './api/api-token';
import { ApiSocket, apiSocketUrl } from './live/api-socket';
import { Router } from './router/router';
import { AppShell } from './shell/app-shell';

const root = document.getElementById('app');
if (!root) throw new Error('index.html has no #app');

const token = new ApiToken();
const shell: AppShell = new AppShell(root, {
  token,
  // Called on any 401 after boot; the shell exists by then.
  api: new ApiClient(token, () => shell.askForToken('The api refused the token (it may have changed). Enter the current one.')),
  socket: new ApiSocket(() => apiSocketUrl(token.get())),
  router: new Router(),
});
void shell.boot();
