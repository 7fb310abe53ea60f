import { BrowserHostError } from '@stageflow/browser-hosts';
import { StageflowError } from '@stageflow/contracts';
import type { HostReadiness } from '../browsers/host-readiness';
import { ProfileBrowserData, type BrowserDataLeases, type ProfileVolumes } from './profile-browser-data.service';

type LeaseState = Awaited<ReturnType<BrowserDataLeases['describe']>>;

function setup(options: { lease?: Partial<LeaseState>; container?: boolean; volume?: 'removed' | 'absent' | Error; ready?: Error } = {}) {
  const removed: string[] = [];
  const volumes: ProfileVolumes = {
    inUse: options.container ?? true,
    removeProfileVolume: jest.fn(async (scope: string, profile: string) => {
      if (options.volume instanceof Error) throw options.volume;
      removed.push(`${scope}/${profile}`);
      return options.volume ?? 'removed';
    }),
  };
  const leases: BrowserDataLeases = {
    describe: jest.fn(async (scope: string, profile: string) => ({ scope, profile, waiters: [], ...options.lease }) as LeaseState),
  };
  const readiness = {
    whenReady: async () => {
      if (options.ready) throw options.ready;
    },
  } as unknown as HostReadiness;
  return { service: new ProfileBrowserData(volumes, leases, readiness, 'local'), removed, volumes };
}

describe('ProfileBrowserData.remove', () => {
  it('removes the volume of the Host\'s own scope and says so', async () => {
    const { service, removed } = setup();
    await expect(service.remove('work')).resolves.toEqual({ browserData: 'volume_removed' });
    expect(removed).toEqual(['local/work']);
  });

  it('is idempotent: no volume (already gone) is success with nothing removed', async () => {
    const { service } = setup({ volume: 'absent' });
    await expect(service.remove('work')).resolves.toEqual({ browserData: 'none' });
  });

  it('refuses with 409 profile_leased, naming the run, while a run holds the profile; the volume is not touched', async () => {
    const { service, volumes } = setup({ lease: { holder: { runId: 'run-7', since: '2030-01-01T00:00:00.000Z', token: 3 } as never } });
    await expect(service.remove('work')).rejects.toMatchObject({
      code: 'profile_leased',
      status: 409,
      message: expect.stringMatching(/in use by run run-7/),
      details: { profile: 'work', holder: { runId: 'run-7', since: '2030-01-01T00:00:00.000Z' }, waiters: [] },
    });
    expect(volumes.removeProfileVolume).not.toHaveBeenCalled();
  });

  it('refuses while runs only wait for the profile', async () => {
    const { service, volumes } = setup({ lease: { waiters: [{ runId: 'run-9', since: '2030-01-01T00:00:00.000Z', ticket: 1 }] as never } });
    await expect(service.remove('work')).rejects.toMatchObject({ code: 'profile_leased', message: expect.stringMatching(/run run-9 is waiting/) });
    expect(volumes.removeProfileVolume).not.toHaveBeenCalled();
  });

  it('passes on 409 profile_in_use when a container still uses the volume', async () => {
    const { service } = setup({ volume: new BrowserHostError('profile_in_use', 'Profile "work"\'s browser container still exists (sf-browser-x).') });
    await expect(service.remove('work')).rejects.toMatchObject({ code: 'profile_in_use', status: 409 });
  });

  it('needs no Docker on a Host that does not use the container host', async () => {
    const { service, volumes } = setup({ container: false });
    await expect(service.remove('work')).resolves.toEqual({ browserData: 'none' });
    expect(volumes.removeProfileVolume).not.toHaveBeenCalled();
  });

  it('waits for the startup sweep: 503 while browser-host is starting, nothing removed', async () => {
    const { service, volumes } = setup({ ready: new StageflowError('browser_host_starting', 'starting', 503) });
    await expect(service.remove('work')).rejects.toMatchObject({ code: 'browser_host_starting' });
    expect(volumes.removeProfileVolume).not.toHaveBeenCalled();
  });
});
