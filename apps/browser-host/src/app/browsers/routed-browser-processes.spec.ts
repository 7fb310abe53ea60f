import { parseHostConfig } from '@stageflow/host-config';
import type { BrowserHandle, LocalBrowserProcesses, SharedLaunch, ThrowawayLaunch } from './browser-processes.adapter';
import type { BrowserRecord } from './browser-record';
import type { ContainerBrowserProcesses } from './container-browser-processes.adapter';
import { RoutedBrowserProcesses } from './routed-browser-processes';
import { FakeBrowser } from './testing/fake-browser-host';

/** A host that records what reached it. */
function fakeHost(kind: 'local' | 'container', inUse = false) {
  const calls: string[] = [];
  const handle = (id: string): BrowserHandle => Object.assign(new FakeBrowser(id, 1, 2), { host: kind });
  const host = {
    kind,
    inUse,
    calls,
    capabilities: () => ({ screen: kind === 'local', liveView: true, headedMode: kind === 'local' ? ('display' as const) : ('xvfb' as const) }),
    launchShared: async (l: SharedLaunch) => (calls.push(`shared ${l.scope}/${l.profile}`), handle(l.browserId)),
    launchThrowaway: async (l: ThrowawayLaunch) => (calls.push(`throwaway ${l.browserId}`), handle(l.browserId)),
    adopt: async (r: BrowserRecord) => (calls.push(`adopt ${r.browserId}`), undefined),
    killRemains: async (r: BrowserRecord) => void calls.push(`killRemains ${r.browserId}`),
    isResponsive: async (h: BrowserHandle) => (calls.push(`isResponsive ${h.browserId}`), true),
    sweepOrphans: async (known: Iterable<string>) => (
      calls.push(`sweep ${[...known].join(',')}`), { browsers: [`${kind}-orphan`], displays: [], profiles: [] }
    ),
    runningIds: () => [`${kind}-running`],
    closeLeftoversOfRun: async (runId: string) => (calls.push(`leftovers ${runId}`), [`${kind}-leftover`]),
  };
  return host;
}

function setup(yaml: string, scope = 'local') {
  const local = fakeHost('local');
  const container = fakeHost('container', /container/.test(yaml));
  const routed = new RoutedBrowserProcesses(
    local as unknown as LocalBrowserProcesses,
    container as unknown as ContainerBrowserProcesses,
    parseHostConfig(yaml, 'config.yaml'),
    scope,
  );
  return { local, container, routed };
}

const shared = (scope: string): SharedLaunch => ({ browserId: `sb-${scope}`, runId: 'r1', scope, profile: 'work', headed: true });
const record = (host: 'local' | 'container'): BrowserRecord => ({
  browserId: `sb-${host}`,
  kind: 'shared',
  hostId: 'h',
  host,
  runId: 'r1',
  scope: 'local',
  profile: 'work',
  pid: 1,
  cdpPort: 2,
  wsEndpoint: 'ws://127.0.0.1:2/devtools/browser/x',
  headedMode: 'xvfb',
  startedAt: '2025-01-01T00:00:00.000Z',
});

describe('RoutedBrowserProcesses', () => {
  it('sends shared browsers to browser.host, with owner_hosts winning for its scopes', async () => {
    const { local, container, routed } = setup('browser:\n  host: container\n  owner_hosts:\n    team-a: local\n');
    await routed.launchShared(shared('local'));
    await routed.launchShared(shared('team-a'));
    expect(container.calls).toEqual(['shared local/work']);
    expect(local.calls).toEqual(['shared team-a/work']);
  });

  it('keeps every shared browser local when nothing names the container host', async () => {
    const { local, container, routed } = setup('browser: {}\n');
    await routed.launchShared(shared('local'));
    expect(local.calls).toEqual(['shared local/work']);
    expect(container.calls).toEqual([]);
    expect(routed.capabilities()).toEqual({ screen: true, liveView: true, headedMode: 'display' });
  });

  it('launches profile-less browsers on the Host even when the scope uses containers', async () => {
    const { local, container, routed } = setup('browser:\n  owner_hosts:\n    local: container\n');
    await routed.launchThrowaway({ browserId: 'tb-1', headed: false, allowDomains: [], onBlocked: () => undefined });
    expect(local.calls).toEqual(['throwaway tb-1']);
    expect(container.calls).toEqual([]);
    expect(routed.capabilities().headedMode).toBe('xvfb');
  });

  it('hands a registered or running browser to the host that started it, whatever the config says now', async () => {
    const { local, container, routed } = setup('browser: {}\n');
    await routed.adopt(record('container'));
    await routed.killRemains(record('container'));
    await routed.adopt(record('local'));
    await routed.isResponsive(Object.assign(new FakeBrowser('sb-c', 1, 2), { host: 'container' as const }));
    expect(container.calls).toEqual(['adopt sb-container', 'killRemains sb-container', 'isResponsive sb-c']);
    expect(local.calls).toEqual(['adopt sb-local']);
    expect(routed.runningIds()).toEqual(['local-running', 'container-running']);
  });

  it('sweeps containers only when Host config uses the container host', async () => {
    const off = setup('browser: {}\n');
    expect(await off.routed.sweepOrphans(['a'])).toEqual({ browsers: ['local-orphan'], displays: [], profiles: [] });
    expect(off.container.calls).toEqual([]);
    const on = setup('browser:\n  host: container\n');
    expect(await on.routed.sweepOrphans(['a'])).toEqual({ browsers: ['local-orphan', 'container-orphan'], displays: [], profiles: [] });
    expect(on.container.calls).toEqual(['sweep a']);
    expect(await on.routed.closeLeftoversOfRun('r9', [])).toEqual(['container-leftover']);
    expect(await off.routed.closeLeftoversOfRun('r9', [])).toEqual([]);
  });
});
