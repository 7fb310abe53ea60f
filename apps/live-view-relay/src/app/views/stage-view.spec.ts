import type { CdpConnection, CdpEventListener, TargetInfo } from '@stageflow/cdp';
import type { SessionRecord } from '@stageflow/contracts';
import { DEFAULT_STAGE_VIEW_OPTIONS, StageView } from './stage-view';

const SESSION = {
  sessionId: 's1',
  runId: 'r1',
  stageId: 'work',
  attempt: 1,
  targetId: 'tab-1',
  cdpEndpoint: 'ws://127.0.0.1:1/devtools/browser/x',
} as SessionRecord;

/**
 * A browser connection that answers `Target.getTargetInfo` from a list of
 * addresses (the tab navigating between two reads) and can send an event
 * when target discovery comes on.
 */
function fakeCdp(addresses: string[], onDiscover?: (emit: (method: string, params: unknown) => void) => void): CdpConnection {
  const listeners = new Map<string, Set<CdpEventListener>>();
  const emit = (method: string, params: unknown) => listeners.get(method)?.forEach((l) => l(params, undefined));
  const info = (url: string): TargetInfo => ({ targetId: SESSION.targetId, type: 'page', title: '', url, attached: true });
  const fake = {
    attachToTab: async () => 'root-session',
    send: async (method: string) => {
      if (method === 'Target.getTargetInfo') return { targetInfo: info(addresses.length > 1 ? (addresses.shift() as string) : addresses[0]) };
      if (method === 'Target.setDiscoverTargets') onDiscover?.((m, p) => emit(m, p));
      return {};
    },
    on: (method: string, listener: CdpEventListener) => {
      const set = listeners.get(method) ?? new Set();
      set.add(listener);
      listeners.set(method, set);
      return () => set.delete(listener);
    },
    onClose: () => () => undefined,
    close: async () => undefined,
  };
  return fake as unknown as CdpConnection;
}

const open = (cdp: CdpConnection) =>
  StageView.open(SESSION, { ...DEFAULT_STAGE_VIEW_OPTIONS, dialogTimeoutSeconds: 60 }, {
    connect: async () => cdp,
    reopen: async () => {
      throw new Error('not used');
    },
    onEnded: () => undefined,
    log: { log: () => undefined, warn: () => undefined, error: () => undefined },
  });

describe('StageView: the address shown', () => {
  it('is the tab\'s address after the view is set up, also when the tab navigated before Chrome reports changes', async () => {
    // open() reads about:blank; the stage's first goto lands before target discovery is on, so no event tells of it.
    const view = await open(fakeCdp(['about:blank', 'http://127.0.0.1:4300/watch']));
    expect(view.url).toBe('http://127.0.0.1:4300/watch');
  });

  it('keeps an address an event brought once discovery is on over the second read', async () => {
    const view = await open(
      fakeCdp(['about:blank', 'http://127.0.0.1:4300/first'], (emit) =>
        emit('Target.targetInfoChanged', { targetInfo: { targetId: SESSION.targetId, type: 'page', title: '', url: 'http://127.0.0.1:4300/second', attached: true } }),
      ),
    );
    expect(view.url).toBe('http://127.0.0.1:4300/second');
  });
});
