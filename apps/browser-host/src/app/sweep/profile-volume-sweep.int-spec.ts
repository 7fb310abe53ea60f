import { profileVolumeName, SANDBOX_LABELS } from '@stageflow/browser-hosts';
import { ProfileStore } from '@stageflow/profiles';
import { BROWSER_SANDBOX_IMAGE, docker, ensureBrowserSandboxImage, removeDockerLeftovers, testRedisUrl } from '@stageflow/testing';
import request from 'supertest';
import { bootHost, deleteKeys, hostDirs, hostEnv, removeDirs, type HostDirs, type HostInProcess } from '../browsers/testing/browser-host.harness';

/**
 * The startup sweep of a container Host against real Docker: volumes of profiles
 * deleted while no browser-host could remove them go; everything else stays. No
 * browser starts. Every volume and container made here is removed at the end.
 */
jest.setTimeout(120_000);

const CONFIG = `browser:
  host: container
  container:
    image: ${BROWSER_SANDBOX_IMAGE}
`;

let dirs: HostDirs;
let host: HostInProcess | undefined;
const volumes: string[] = [];

async function volume(profile: string, labels: Record<string, string>): Promise<string> {
  const name = profileVolumeName('local', profile);
  volumes.push(name);
  await docker('volume', 'create', ...Object.entries(labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]), name);
  return name;
}

const volumeExists = (name: string) => docker('volume', 'inspect', name).then(() => true, () => false);

beforeAll(async () => {
  await ensureBrowserSandboxImage();
  dirs = await hostDirs(CONFIG);
});

afterAll(async () => {
  await host?.app.close();
  if (dirs) {
    await removeDockerLeftovers({ hostId: dirs.hostId, volumes });
    await deleteKeys(testRedisUrl(), dirs.prefix);
    await removeDirs(dirs);
  }
});

it('removes only this host\'s volumes of profiles that no longer exist and no container uses', async () => {
  const id = dirs.hostId;
  const own = (profile: string) => ({ [SANDBOX_LABELS.scope]: 'local', [SANDBOX_LABELS.profile]: profile, [SANDBOX_LABELS.host]: id });
  await new ProfileStore({ home: dirs.home }).create('local', `kept-${id}`);
  const kept = await volume(`kept-${id}`, own(`kept-${id}`));
  const orphan = await volume(`gone-${id}`, own(`gone-${id}`));
  // Same pattern, but another host id made it, or nobody labelled it (docker run -v by hand): not ours.
  const otherHost = await volume(`other-${id}`, { ...own(`other-${id}`), [SANDBOX_LABELS.host]: `${id}-other` });
  const bare = await volume(`bare-${id}`, {});
  // Ours and orphaned, but a (stopped) container still has it mounted.
  const used = await volume(`used-${id}`, own(`used-${id}`));
  await docker('create', '--label', `${SANDBOX_LABELS.host}=${id}`, '-v', `${used}:/profile`, BROWSER_SANDBOX_IMAGE);

  host = await bootHost(hostEnv(dirs, testRedisUrl()));

  expect(host.report.orphanVolumes).toEqual([`gone-${id}`]);
  expect(await volumeExists(orphan)).toBe(false);
  for (const name of [kept, otherHost, bare, used]) expect(await volumeExists(name)).toBe(true);

  // The route is idempotent on a volume that is already gone, and validates the name.
  const http = request(host.app.getHttpServer());
  expect((await http.delete(`/internal/profiles/gone-${id}/browser-data`).expect(200)).body).toEqual({ browserData: 'none' });
  expect((await http.delete('/internal/profiles/..%2Fx/browser-data').expect(400)).body.code).toBe('profile_name_invalid');
  // A stopped container on the volume: refused, naming it; the volume stays.
  const refused = await http.delete(`/internal/profiles/used-${id}/browser-data`).expect(409);
  expect(refused.body).toMatchObject({ code: 'profile_in_use', message: expect.stringMatching(/browser container still exists/) });
  expect(await volumeExists(used)).toBe(true);
});
