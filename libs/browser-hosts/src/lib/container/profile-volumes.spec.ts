import type Docker from 'dockerode';
import { ContainerChromeAdapter } from './container-chrome.adapter';

/** The volume side of the container host over a scripted Docker client: which volumes it removes, and when it refuses. */
interface FakeVolume {
  Name: string;
  Labels: Record<string, string> | null;
}

function fakeDocker(volumes: FakeVolume[], usedBy: Record<string, string[]> = {}) {
  const removed: string[] = [];
  const docker = {
    listVolumes: jest.fn(async () => ({ Volumes: volumes, Warnings: [] })),
    listContainers: jest.fn(async (opts: { filters: { volume: string[] } }) =>
      (usedBy[opts.filters.volume[0]] ?? []).map((name) => ({ Id: `${name}-id`, Names: [`/${name}`] })),
    ),
    getVolume: (name: string) => ({
      inspect: async () => {
        const found = volumes.find((v) => v.Name === name && !removed.includes(name));
        if (!found) throw Object.assign(new Error('no such volume'), { statusCode: 404 });
        return found;
      },
      remove: async () => {
        removed.push(name);
      },
    }),
  };
  const adapter = new ContainerChromeAdapter({
    docker: docker as unknown as Docker,
    image: 'img',
    shmSizeBytes: 1,
    memoryBytes: 1,
    pidsLimit: 1,
    hostId: 'h1',
  });
  return { adapter, removed, docker };
}

const own = (profile: string, scope = 'local', host = 'h1'): FakeVolume => ({
  Name: `sf-profile-${scope}-${profile}`,
  Labels: { 'stageflow.scope': scope, 'stageflow.profile': profile, 'stageflow.host': host },
});

describe('ContainerChromeAdapter profile volumes', () => {
  it('sweeps only volumes of its own host and scope whose name matches their labels, unkept and unused', async () => {
    const volumes = [
      own('gone'),
      own('kept'),
      own('used'),
      own('theirs', 'local', 'h2'),
      own('other-scope', 'team'),
      { Name: 'sf-profile-local-renamed', Labels: own('x').Labels },
      { Name: 'sf-profile-local-bare', Labels: null },
    ];
    const { adapter, removed } = fakeDocker(volumes, { 'sf-profile-local-used': ['sf-browser-b1'] });
    const swept = await adapter.sweepProfileVolumes('local', (profile) => profile === 'kept');
    expect(swept).toEqual(['gone']);
    expect(removed).toEqual(['sf-profile-local-gone']);
  });

  it('removes a profile\'s volume whichever host made it, and is idempotent', async () => {
    const { adapter, removed } = fakeDocker([own('work', 'local', 'h2')]);
    await expect(adapter.removeProfileVolume('local', 'work')).resolves.toBe('removed');
    await expect(adapter.removeProfileVolume('local', 'work')).resolves.toBe('absent');
    expect(removed).toEqual(['sf-profile-local-work']);
  });

  it('leaves a volume labelled for another (scope, profile) pair that happens to share the name', async () => {
    // scope "local" + profile "a-b" and scope "local-a" + profile "b" both make sf-profile-local-a-b.
    const { adapter, removed } = fakeDocker([{ Name: 'sf-profile-local-a-b', Labels: { 'stageflow.scope': 'local-a', 'stageflow.profile': 'b' } }]);
    await expect(adapter.removeProfileVolume('local', 'a-b')).resolves.toBe('absent');
    expect(removed).toEqual([]);
  });

  it('refuses with profile_in_use, naming the container, while any container uses the volume', async () => {
    const { adapter, removed } = fakeDocker([own('work')], { 'sf-profile-local-work': ['sf-browser-b1'] });
    await expect(adapter.removeProfileVolume('local', 'work')).rejects.toMatchObject({
      code: 'profile_in_use',
      status: 409,
      message: expect.stringContaining('sf-browser-b1'),
    });
    expect(removed).toEqual([]);
  });

  it('refuses names that are not safe', async () => {
    const { adapter } = fakeDocker([]);
    await expect(adapter.removeProfileVolume('local', '../x')).rejects.toMatchObject({ code: 'launch_options_invalid' });
  });
});
