import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROFILE_AUDIT_TRAIL, PROFILE_SCOPE, ProfileScopeError, ProfileService, ProfilesModule, ProfileStore } from '../index';
import { FakeLeases, MemoryAuditTrail } from '../test/profile-fakes';

const LEASES = Symbol('test leases');

@Module({ providers: [{ provide: LEASES, useClass: FakeLeases }], exports: [LEASES] })
class FakeLeasesModule {}

describe('ProfilesModule', () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), 'sf-profiles-module-'))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('wires store, leases from the given module, and the Host scope (local by default)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ProfilesModule.forRoot({ home, leases: { imports: [FakeLeasesModule], useExisting: LEASES } })],
    })
      .overrideProvider(PROFILE_AUDIT_TRAIL)
      .useValue(new MemoryAuditTrail())
      .compile();
    expect(moduleRef.get(PROFILE_SCOPE)).toBe('local');
    const service = moduleRef.get(ProfileService);
    await service.create('local', 'work');
    expect(await service.list('local')).toEqual([expect.objectContaining({ name: 'work', lease: { waiters: [] } })]);
    expect(await moduleRef.get(ProfileStore).pathFor('local', 'work')).toBe(join(home, 'browser', 'local', 'work'));
  });

  it('refuses a bad scope at boot', () => {
    expect(() => ProfilesModule.forRoot({ home, scope: '../x', leases: { useExisting: LEASES } })).toThrow(ProfileScopeError);
  });
});
