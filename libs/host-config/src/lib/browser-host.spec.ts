import { hostFor, parseHostConfig } from '../index';

describe('hostFor', () => {
  it('uses browser.host for scopes not listed in owner_hosts', () => {
    expect(hostFor(parseHostConfig('', 'x'), 'local')).toBe('local');
    expect(hostFor(parseHostConfig('browser: {host: container}', 'x'), 'local')).toBe('container');
  });

  it('lets owner_hosts override browser.host for one scope', () => {
    const config = parseHostConfig('browser: {host: container, owner_hosts: {local: local, team-a: container}}', 'x');
    expect(hostFor(config, 'local')).toBe('local');
    expect(hostFor(config, 'team-a')).toBe('container');
    expect(hostFor(config, 'team-b')).toBe('container');
  });

  it('does not mistake inherited object keys for scopes', () => {
    const config = parseHostConfig('browser: {host: local}', 'x');
    expect(hostFor(config, 'constructor')).toBe('local');
    expect(hostFor(config, 'toString')).toBe('local');
  });
});
