import { ApiError } from '../api/api-client';
import { checkCell, checkFailure } from './profile-check';

describe('checkCell', () => {
  const at = '2030-01-02T03:04:05.000Z';

  it('shows the last result with its page and time', () => {
    expect(checkCell({ loggedIn: true, url: 'https://a.test/account', checkedAt: at })).toEqual({ state: 'logged_in', text: 'logged in', url: 'https://a.test/account', at });
    expect(checkCell({ loggedIn: false, url: 'https://a.test/login', checkedAt: at })).toMatchObject({ state: 'logged_out', text: 'logged out' });
    expect(checkCell(undefined)).toEqual({ state: 'never', text: 'never checked' });
  });

  it('shows a running check over the last result, and a failure instead of it', () => {
    const last = { loggedIn: true, url: 'https://a.test/', checkedAt: at };
    expect(checkCell(last, { running: true }).state).toBe('checking');
    expect(checkCell(last, { running: false, error: 'held by run r-1' })).toEqual({ state: 'failed', text: 'held by run r-1' });
  });
});

describe('checkFailure', () => {
  it('keeps the api\'s words and code', () => {
    const error = new ApiError(409, 'profile_leased', 'Browser profile "work" is in use by run r-1 (since …)');
    expect(checkFailure(error)).toBe('Browser profile "work" is in use by run r-1 (since …) (profile_leased)');
    expect(checkFailure(new Error('boom'))).toBe('boom');
  });
});
