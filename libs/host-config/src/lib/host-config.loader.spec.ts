import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultHostConfig, HostConfigError, hostConfigPath, loadHostConfig } from '../index';

describe('loadHostConfig', () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'sf-host-config-'));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it('gives all defaults when config.yaml does not exist', () => {
    expect(loadHostConfig(home)).toEqual(defaultHostConfig());
  });

  it('reads $STAGEFLOW_HOME/config.yaml', () => {
    writeFileSync(hostConfigPath(home), 'browser:\n  blocked_sites: [example.com]\n');
    expect(loadHostConfig(home).browser.blockedSites).toEqual(['example.com']);
  });

  it('names the file in errors', () => {
    writeFileSync(hostConfigPath(home), 'browser:\n  host: docker\n');
    expect(() => loadHostConfig(home)).toThrow(
      `${join(home, 'config.yaml')}:2:9: browser.host must be local or container`,
    );
  });

  it('turns an unreadable file into a HostConfigError that says what to check', () => {
    mkdirSync(hostConfigPath(home));
    expect(() => loadHostConfig(home)).toThrow(HostConfigError);
    expect(() => loadHostConfig(home)).toThrow(/cannot be read \(EISDIR\)/);
  });

  it('uses the given fs adapter', () => {
    const read: string[] = [];
    const config = loadHostConfig('/sf', {
      readFile: (p) => {
        read.push(p);
        return 'browser: {host: container}';
      },
    });
    expect(read).toEqual(['/sf/config.yaml']);
    expect(config.browser.host).toBe('container');
  });

  it('does not hide permission problems', () => {
    if (process.getuid?.() === 0) return; // root reads anything
    writeFileSync(hostConfigPath(home), 'browser: {}\n');
    chmodSync(hostConfigPath(home), 0o000);
    expect(() => loadHostConfig(home)).toThrow(/EACCES/);
  });
});
