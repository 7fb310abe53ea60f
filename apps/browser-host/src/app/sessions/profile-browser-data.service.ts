import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ProfileBrowserDataResult } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { ProfileLeasedError } from '@stageflow/profiles';
import { OWNER_SCOPE } from '../browsers/browser-host.tokens';
import { ContainerBrowserProcesses } from '../browsers/container-browser-processes.adapter';
import { HostReadiness } from '../browsers/host-readiness';

/** How long a removal waits for the startup sweep (which closes and removes dead runs' containers) before 503. */
const READY_WAIT_MS = 10_000;

/** The lease read a removal makes; `ProfileLeases` fits it. */
export type BrowserDataLeases = Pick<ProfileLeases, 'describe'>;
/** The container host's volume calls; `ContainerBrowserProcesses` fits it. */
export type ProfileVolumes = Pick<ContainerBrowserProcesses, 'inUse' | 'removeProfileVolume'>;

/**
 * Removes what browser-host keeps of a profile outside the profile store: the
 * container host's Docker volume, where Chrome keeps the profile's cookies. The api
 * calls it before it deletes a profile, so a new profile of the same name starts
 * logged out. Refused while a run holds or waits for the profile, or while a
 * container uses its volume; idempotent otherwise.
 */
@Injectable()
export class ProfileBrowserData {
  private readonly log = new Logger('ProfileBrowserData');

  constructor(
    @Inject(ContainerBrowserProcesses) private readonly volumes: ProfileVolumes,
    @Inject(ProfileLeases) private readonly leases: BrowserDataLeases,
    private readonly readiness: HostReadiness,
    @Inject(OWNER_SCOPE) private readonly scope: string,
  ) {}

  /**
   * @throws `profile_leased` (409) naming the holder or first waiting run;
   * `profile_in_use` (409) naming the container that still uses the volume;
   * `browser_host_starting` (503) while the startup sweep runs.
   */
  async remove(profile: string): Promise<ProfileBrowserDataResult> {
    await this.readiness.whenReady(READY_WAIT_MS);
    const state = await this.leases.describe(this.scope, profile);
    if (state.holder || state.waiters.length > 0) {
      throw new ProfileLeasedError(profile, {
        ...(state.holder ? { holder: { runId: state.holder.runId, since: state.holder.since } } : {}),
        waiters: state.waiters.map((w) => ({ runId: w.runId, since: w.since })),
      });
    }
    // A Host that does not use the container host may have no Docker at all; a volume an
    // earlier container Host left is removed by the startup sweep of the next one that does.
    if (!this.volumes.inUse) return { browserData: 'none' };
    const outcome = await this.volumes.removeProfileVolume(this.scope, profile);
    if (outcome === 'removed') this.log.log({ msg: 'Removed the profile\'s browser data (its Docker volume)', profile });
    return { browserData: outcome === 'removed' ? 'volume_removed' : 'none' };
  }
}
