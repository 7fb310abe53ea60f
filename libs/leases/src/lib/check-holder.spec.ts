import { checkHolderExpiry, checkHolderId, isCheckHolder, withCheckHolders } from './check-holder';

describe('check holder ids', () => {
  it('carry their deadline and are never mistaken for a run id', () => {
    const id = checkHolderId(1_900_000_000_123, 'a1b2c3d4e5f6');
    expect(id).toBe(`check_${(1_900_000_000_123).toString(36)}_a1b2c3d4e5f6`);
    expect(checkHolderExpiry(id)).toBe(1_900_000_000_123);
    expect(id).toMatch(/^[A-Za-z0-9_-]{1,128}$/); // a valid lease holder id
    // A run id as newRunId makes it, and look-alikes, are not check holders.
    for (const runId of ['mi3k2x8a-0a1b2c3d4e', 'check-abc-0123456789', 'check_zz_xyz', 'check__abcdef12', `${id}x_`]) {
      expect(isCheckHolder(runId)).toBe(false);
    }
  });

  it('a random part by default, so two checks never share an id', () => {
    expect(checkHolderId(1000)).not.toBe(checkHolderId(1000));
  });
});

describe('withCheckHolders', () => {
  it('judges a check holder by its deadline and asks the engine about runs only', async () => {
    const asked: string[] = [];
    const live = withCheckHolders(async (id) => {
      asked.push(id);
      return id === 'run-alive';
    }, () => 5_000);
    await expect(live(checkHolderId(6_000, 'aaaaaaaa'))).resolves.toBe(true);
    await expect(live(checkHolderId(5_000, 'bbbbbbbb'))).resolves.toBe(false);
    await expect(live('run-alive')).resolves.toBe(true);
    await expect(live('run-dead')).resolves.toBe(false);
    expect(asked).toEqual(['run-alive', 'run-dead']);
  });
});
