import { parseRoute, routeHref } from './routes';

describe('console routes', () => {
  it('maps the paths the api answers with index.html to pages', () => {
    expect(parseRoute('/')).toEqual({ name: 'runs' });
    expect(parseRoute('/runs')).toEqual({ name: 'runs' });
    expect(parseRoute('/runs/')).toEqual({ name: 'runs' });
    expect(parseRoute('/runs/m1x2-ab_12')).toEqual({ name: 'run', runId: 'm1x2-ab_12' });
    expect(parseRoute('/profiles')).toEqual({ name: 'profiles' });
    expect(parseRoute('/audit', '?type=profile_deleted&profile=work')).toEqual({ name: 'audit', query: { type: 'profile_deleted', profile: 'work' } });
  });

  it('treats a run id the api would refuse (invalid_id) and unknown paths as not found', () => {
    for (const path of ['/runs/a.b', '/runs/..', '/runs/%2e%2e', '/runs/' + 'x'.repeat(129), '/runs/a/b', '/nope', '/runs/%E0%A4%A']) {
      expect(parseRoute(path)).toEqual({ name: 'not-found', path });
    }
  });

  it('builds hrefs that parse back to the same route', () => {
    for (const route of [{ name: 'runs' as const }, { name: 'run' as const, runId: 'r-1' }, { name: 'profiles' as const }, { name: 'audit' as const, query: { run: 'r-1', limit: '5' } }]) {
      const href = routeHref(route);
      const url = new URL(href, 'http://console');
      expect(parseRoute(url.pathname, url.search)).toEqual(route);
    }
    expect(routeHref({ name: 'audit', query: { type: '', profile: 'work' } })).toBe('/audit?profile=work');
  });
});
