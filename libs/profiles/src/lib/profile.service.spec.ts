import { Logger } from '@nestjs/common';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileAuditFailedError, ProfileLeasedError, ProfileNotFoundError, ProfileService, ProfileStore } from '../index';
import { FakeLeases, MemoryAuditTrail } from '../test/profile-fakes';

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; status?: number; details?: unknown }> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('ProfileService', () => {
  let base: string;
  let dirOf: (name: string) => string;
  let leases: FakeLeases;
  let audit: MemoryAuditTrail;
  let service: ProfileService;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'sf-profile-service-'));
    dirOf = (name) => join(base, 'browser', 'local', name);
    leases = new FakeLeases();
    audit = new MemoryAuditTrail();
    service = new ProfileService(new ProfileStore({ home: base, userHome: tmpdir() }), leases, audit);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('creates a profile and audits profile_created with names only', async () => {
    expect(await service.create('local', 'work')).toEqual({ name: 'work', scope: 'local', createdAt: expect.any(String) });
    expect(existsSync(dirOf('work'))).toBe(true);
    expect(audit.records).toEqual([{ type: 'profile_created', profile: 'work', scope: 'local' }]);
  });

  it('audits nothing when the create is refused', async () => {
    await service.create('local', 'work');
    await expect(service.create('local', 'work')).rejects.toMatchObject({ code: 'profile_exists' });
    await expect(service.create('local', '../x')).rejects.toMatchObject({ code: 'profile_name_invalid' });
    expect(audit.records).toHaveLength(1);
  });

  it('lists each profile with its lease: holder and waiters, without fencing token or ticket', async () => {
    await service.create('local', 'work');
    await service.create('local', 'free');
    leases.hold('work', 'run-1').queue('work', 'run-2').queue('work', 'run-3');
    expect(await service.list('local')).toEqual([
      { name: 'free', scope: 'local', createdAt: expect.any(String), lease: { waiters: [] } },
      {
        name: 'work',
        scope: 'local',
        createdAt: expect.any(String),
        lease: {
          holder: { runId: 'run-1', since: '2030-01-01T00:00:00.000Z' },
          waiters: [
            { runId: 'run-2', since: '2030-01-01T00:01:00.000Z' },
            { runId: 'run-3', since: '2030-01-01T00:01:00.000Z' },
          ],
        },
      },
    ]);
    expect(JSON.stringify(await service.list('local'))).not.toMatch(/token|ticket/);
  });

  it('gets one profile with size and lease; a missing one is 404 without asking the leases', async () => {
    await service.create('local', 'work');
    writeFileSync(join(dirOf('work'), 'Cookies'), 'x'.repeat(10));
    leases.hold('work', 'run-1');
    expect(await service.get('local', 'work')).toEqual({
      name: 'work',
      scope: 'local',
      createdAt: expect.any(String),
      sizeBytes: 10,
      lease: { holder: { runId: 'run-1', since: '2030-01-01T00:00:00.000Z' }, waiters: [] },
    });
    leases.described.length = 0;
    expect(await rejection(service.get('local', 'nope'))).toBeInstanceOf(ProfileNotFoundError);
    expect(leases.described).toEqual([]);
  });

  describe('delete', () => {
    beforeEach(async () => {
      await service.create('local', 'work');
      writeFileSync(join(dirOf('work'), 'Cookies'), 'secret');
      audit.records.length = 0;
    });

    it('refuses while a run holds the profile: 409 profile_leased naming the run; folder and cookies kept', async () => {
      leases.hold('work', 'run-7').queue('work', 'run-8');
      const err = await rejection(service.delete('local', 'work'));
      expect(err).toBeInstanceOf(ProfileLeasedError);
      expect(err).toMatchObject({
        code: 'profile_leased',
        status: 409,
        details: {
          profile: 'work',
          holder: { runId: 'run-7', since: '2030-01-01T00:00:00.000Z' },
          waiters: [{ runId: 'run-8', since: '2030-01-01T00:01:00.000Z' }],
        },
      });
      expect(err.message).toMatch(/in use by run run-7 .* and 1 more run waits for it.*wait until run run-7 ends, or cancel it/);
      expect(existsSync(join(dirOf('work'), 'Cookies'))).toBe(true);
      expect(audit.records).toEqual([]);
    });

    it('refuses while runs only wait for it, and says so', async () => {
      leases.queue('work', 'run-2').queue('work', 'run-3');
      const err = await rejection(service.delete('local', 'work'));
      expect(err).toMatchObject({ code: 'profile_leased', details: { waiters: [{ runId: 'run-2' }, { runId: 'run-3' }] } });
      expect(err.message).toMatch(/run run-2 is waiting for it \(2 runs wait\)/);
      expect(existsSync(dirOf('work'))).toBe(true);
    });

    it('deletes a free profile and audits profile_deleted', async () => {
      leases.hold('work', 'run-1').free('work');
      await service.delete('local', 'work');
      expect(existsSync(dirOf('work'))).toBe(false);
      expect(audit.records).toEqual([{ type: 'profile_deleted', profile: 'work', scope: 'local' }]);
    });

    it('removes the browser data after the lease check and before the folder, and audits what went', async () => {
      const order: string[] = [];
      await service.delete('local', 'work', async () => {
        order.push(existsSync(dirOf('work')) ? 'browser data, folder still there' : 'browser data, folder gone');
        return 'volume_removed';
      });
      expect(order).toEqual(['browser data, folder still there']);
      expect(existsSync(dirOf('work'))).toBe(false);
      expect(audit.records).toEqual([{ type: 'profile_deleted', profile: 'work', scope: 'local', browserData: 'volume_removed' }]);
    });

    it('keeps folder and cookies, audits nothing, when removing the browser data fails; never asks while leased', async () => {
      const remove = jest.fn(async (): Promise<'none'> => {
        throw new Error('browser-host did not answer');
      });
      await expect(service.delete('local', 'work', remove)).rejects.toThrow('browser-host did not answer');
      expect(existsSync(join(dirOf('work'), 'Cookies'))).toBe(true);
      expect(audit.records).toEqual([]);
      remove.mockClear();
      leases.hold('work', 'run-1');
      await expect(service.delete('local', 'work', remove)).rejects.toMatchObject({ code: 'profile_leased' });
      expect(remove).not.toHaveBeenCalled();
    });

    it('answers 404 for a missing profile without asking the leases', async () => {
      leases.described.length = 0;
      await expect(service.delete('local', 'other')).rejects.toMatchObject({ code: 'profile_not_found', status: 404 });
      expect(leases.described).toEqual([]);
    });

    it('keeps the folder when the leases cannot be read', async () => {
      leases.failWith = new Error('ECONNREFUSED');
      await expect(service.delete('local', 'work')).rejects.toThrow('ECONNREFUSED');
      expect(existsSync(dirOf('work'))).toBe(true);
    });
  });

  it('says so when the audit record cannot be written, without the cause (it may hold a path) reaching the client', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      audit.failWith = new Error(`EACCES: permission denied, open '${base}/browser/audit.jsonl'`);
      const err = await rejection(service.create('local', 'work'));
      expect(err).toBeInstanceOf(ProfileAuditFailedError);
      expect(err).toMatchObject({ code: 'profile_audit_failed', status: 500 });
      expect(err.message).toMatch(/"work" was created, but its audit record could not be written/);
      expect(err.message).not.toContain(base);
      expect(logged).toHaveBeenCalledWith(expect.stringContaining('EACCES'), expect.any(String));
    } finally {
      logged.mockRestore();
    }
  });
});
