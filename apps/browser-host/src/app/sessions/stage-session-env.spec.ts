import type { SessionRecord } from './session-record';
import { runDirName, stageSessionEnv, stageSessionId, toStageSession } from './stage-session-env';

describe('stage session ids', () => {
  const dir = '/tmp/stageflow-local-run/lx4k2m1-0a1b2c3d4e';

  it('is sf-<run>-<stage>-<attempt>, one per attempt', () => {
    expect(stageSessionId('lx4k2m1-0a1b2c3d4e', 'work', 1, dir)).toBe('sf-lx4k2m1-0a1b2c3d4e-work-1');
    expect(stageSessionId('lx4k2m1-0a1b2c3d4e', 'work', 2, dir)).toBe('sf-lx4k2m1-0a1b2c3d4e-work-2');
  });

  it('becomes a digest when the daemon socket path would not fit a unix socket', () => {
    const stage = 's'.repeat(60);
    const id = stageSessionId('lx4k2m1-0a1b2c3d4e', stage, 3, dir);
    expect(id).toMatch(/^sf-[0-9a-f]{16}-3$/);
    expect(Buffer.byteLength(`${dir}/${id}.sock`)).toBeLessThanOrEqual(107);
    // Still one per stage and attempt.
    expect(stageSessionId('lx4k2m1-0a1b2c3d4e', `${stage}x`, 3, dir)).not.toBe(id);
  });

  it('only uses characters agent-browser accepts in a session name', () => {
    expect(stageSessionId('r_1-A', 'stage_2-B', 1, dir)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('names a long run id\'s socket dir by a digest', () => {
    expect(runDirName('lx4k2m1-0a1b2c3d4e')).toBe('lx4k2m1-0a1b2c3d4e');
    expect(runDirName('r'.repeat(100))).toMatch(/^r-[0-9a-f]{16}$/);
  });
});

describe('the stage environment', () => {
  const record = {
    sessionId: 'sf-run1-work-1',
    cdpEndpoint: 'ws://127.0.0.1:40123/devtools/browser/6c1e',
    socketDir: '/tmp/stageflow-local-run/run1',
    targetId: 'A1B2',
  };

  it('attaches agent-browser to the shared browser, pinned to the stage tab', () => {
    expect(stageSessionEnv(record)).toEqual({
      AGENT_BROWSER_CDP: 'ws://127.0.0.1:40123/devtools/browser/6c1e',
      AGENT_BROWSER_SESSION: 'sf-run1-work-1',
      AGENT_BROWSER_PIN_TAB: '1',
      AGENT_BROWSER_NO_AUTO_DIALOG: '1',
      AGENT_BROWSER_SOCKET_DIR: '/tmp/stageflow-local-run/run1',
      AGENT_BROWSER_NO_VERSION_CHECK: '1',
      STAGEFLOW_CDP_TARGET: 'A1B2',
    });
  });

  it('maps a record to the contract without the profile or its folder', () => {
    const full: SessionRecord = {
      ...record,
      hostId: 'local',
      runId: 'run1',
      stageId: 'work',
      attempt: 1,
      kind: 'shared',
      browserId: 'sb-1',
      scope: 'local',
      profile: 'work-profile',
      headedMode: 'headless',
      openedAt: '2025-01-01T00:00:00.000Z',
      blocked: [],
    };
    const session = toStageSession(full);
    expect(Object.keys(session).sort()).toEqual(['browserId', 'cdpEndpoint', 'env', 'headedMode', 'sessionId', 'socketDir', 'targetId']);
    expect(JSON.stringify(session)).not.toContain('work-profile');
  });
});
