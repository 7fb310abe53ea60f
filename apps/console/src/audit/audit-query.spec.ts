import { filtersFromQuery, filtersToQuery, isoToLocalInput, localInputToIso } from './audit-query';

describe('audit filters', () => {
  it('reads the filters GET /api/audit takes from the address, and drops what it would refuse', () => {
    expect(filtersFromQuery({ type: 'profile_deleted', profile: 'work', run: 'r-1', since: '2030-01-01T00:00:00Z', limit: '20', other: 'x' })).toEqual({
      type: 'profile_deleted',
      profile: 'work',
      run: 'r-1',
      since: '2030-01-01T00:00:00Z',
      limit: 20,
    });
    expect(filtersFromQuery({ type: 'nonsense', limit: '5000' })).toEqual({});
    expect(filtersToQuery({ type: 'profile_used', limit: 5, profile: undefined })).toEqual({ type: 'profile_used', limit: '5' });
  });

  it('converts between datetime-local values and ISO 8601', () => {
    const iso = localInputToIso('2030-01-02T03:04');
    expect(iso).toMatch(/^2030-01-0[12]T\d\d:04:00Z$/);
    expect(isoToLocalInput(iso)).toBe('2030-01-02T03:04');
    expect(localInputToIso('')).toBeUndefined();
    expect(localInputToIso('garbage')).toBeUndefined();
  });
});
