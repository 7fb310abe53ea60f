/**
 * The console's client-side routes. The api answers each of them with
 * index.html (apps/api/src/app/core/console-static.ts), and nothing under
 * /api is ever a console route.
 */
export type Route =
  | { name: 'runs' }
  | { name: 'run'; runId: string }
  | { name: 'profiles' }
  | { name: 'audit'; query: Record<string, string> }
  | { name: 'not-found'; path: string };

/** Run ids as the api accepts them (`invalid_id` otherwise). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function parseRoute(pathname: string, search = ''): Route {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  if (path === '/' || path === '/runs') return { name: 'runs' };
  if (path === '/profiles') return { name: 'profiles' };
  if (path === '/audit') return { name: 'audit', query: Object.fromEntries(new URLSearchParams(search)) };
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (run) {
    let runId: string;
    try {
      runId = decodeURIComponent(run[1]);
    } catch {
      return { name: 'not-found', path: pathname };
    }
    if (ID_PATTERN.test(runId)) return { name: 'run', runId };
  }
  return { name: 'not-found', path: pathname };
}

export function routeHref(route: Route): string {
  switch (route.name) {
    case 'runs':
      return '/';
    case 'run':
      return `/runs/${encodeURIComponent(route.runId)}`;
    case 'profiles':
      return '/profiles';
    case 'audit': {
      const search = new URLSearchParams(Object.entries(route.query).filter(([, v]) => v !== '')).toString();
      return search ? `/audit?${search}` : '/audit';
    }
    case 'not-found':
      return route.path;
  }
}

export const runHref = (runId: string): string => routeHref({ name: 'run', runId });
