import { secretKindOfName } from '../index';

describe('secretKindOfName', () => {
  it.each([
    ['password', 'password'],
    ['DB_PASSWORD', 'password'],
    ['accessToken', 'token'],
    ['access_token', 'token'],
    ['X-Api-Key', 'api_key'],
    ['AWS_SECRET_ACCESS_KEY', 'api_key'],
    ['aws_access_key_id', 'api_key'],
    ['set-cookie', 'cookie'],
    ['PHPSESSID', 'session'],
    ['JSESSIONID', 'session'],
    ['connect.sid', 'session'],
    ['client_secret', 'secret'],
    ['csrftoken', 'token'],
    ['private_key', 'private_key'],
    ['password_reset_token', 'token'],
  ])('%s holds a %s', (name, kind) => {
    expect(secretKindOfName(name)).toBe(kind);
  });

  it.each([
    'max_tokens',
    'input_tokens',
    'token_type',
    'token_count',
    'expires_in',
    'password_policy',
    'password-store',
    'cookie_name',
    'PWD',
    'pass',
    'user',
    'AGENT_BROWSER_SESSION',
    'AGENT_BROWSER_PIN_TAB',
    'api_key_name',
    'key',
  ])('%s is not a secret', (name) => {
    expect(secretKindOfName(name)).toBeUndefined();
  });

  it('knows names that are secret only in one place', () => {
    expect(secretKindOfName('key', 'query')).toBe('api_key');
    expect(secretKindOfName('code', 'query')).toBe('token');
    expect(secretKindOfName('session', 'flag')).toBeUndefined();
    expect(secretKindOfName('li_at', 'cookie')).toBe('cookie');
    expect(secretKindOfName('li_at')).toBeUndefined();
  });
});
