import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultHostConfig, HOST_CONFIG_LIMITS, HostConfigError, parseHostConfig } from '../index';

const VALID = join(__dirname, '../../../../tests/fixtures/host-config/valid');

function problemsOf(source: string): { path: string; line: number; column: number; message: string }[] {
  try {
    parseHostConfig(source, 'config.yaml');
  } catch (e) {
    if (e instanceof HostConfigError) return e.details;
    throw e;
  }
  throw new Error('expected HostConfigError');
}

describe('parseHostConfig', () => {
  it('gives every default for an empty file', () => {
    expect(parseHostConfig('', 'config.yaml')).toEqual(defaultHostConfig());
    expect(parseHostConfig('# nothing\n', 'config.yaml').browser.dialogTimeoutSeconds).toBe(60);
  });

  it('reads every key of the documented example', () => {
    const config = parseHostConfig(readFileSync(join(VALID, 'full.yaml'), 'utf8'), 'full.yaml');
    expect(config.browser).toMatchObject({
      blockedSites: ['example.com', 'mail.example.org'],
      launchArgs: ['--no-sandbox', '--use-gl=angle'],
      executablePath: '/usr/bin/chromium',
      dialogTimeoutSeconds: 60,
      host: 'local',
      container: { shmSizeBytes: 512 * 1024 ** 2, memoryBytes: 1024 ** 3, pidsLimit: 256 },
    });
    expect(config.browser.container.image).toMatch(/^registry\.example\.com:5000\/team\/browser-sandbox:1\.2@sha256:/);
    expect({ ...config.browser.ownerHosts }).toEqual({ local: 'container' });
  });

  it('normalizes blocked sites: lowercase, punycode, no trailing dot, no duplicates', () => {
    const config = parseHostConfig(readFileSync(join(VALID, 'blocked-sites.yaml'), 'utf8'), 'x');
    expect(config.browser.blockedSites).toEqual([
      'example.com',
      'accounts.example.org',
      'xn--bcher-kva.example',
      '10.0.0.1',
    ]);
    expect(parseHostConfig('browser: {blocked_sites: [a.com, A.com]}', 'x').browser.blockedSites).toEqual(['a.com']);
  });

  it('converts sizes with b, k, m and g to bytes, in either case', () => {
    const shm = (size: string): number =>
      parseHostConfig(`browser: {container: {shm_size: "${size}"}}`, 'x').browser.container.shmSizeBytes;
    expect(['1024', '1024b', '1k', '1K'].map(shm)).toEqual([1024, 1024, 1024, 1024]);
    expect(shm('256m')).toBe(256 * 1024 ** 2);
    expect(shm('2G')).toBe(2 * 1024 ** 3);
    expect(parseHostConfig('browser: {container: {memory: 1073741824}}', 'x').browser.container.memoryBytes).toBe(
      1024 ** 3,
    );
  });

  it('accepts dialog_timeout_seconds up to the documented maximum and no further', () => {
    const { max } = HOST_CONFIG_LIMITS.dialogTimeoutSeconds;
    expect(parseHostConfig(`browser: {dialog_timeout_seconds: ${max}}`, 'x').browser.dialogTimeoutSeconds).toBe(max);
    expect(problemsOf(`browser: {dialog_timeout_seconds: ${max + 1}}`)[0].message).toMatch(/above the maximum/);
  });

  it('reports every problem at once, each with its own line', () => {
    const problems = problemsOf(
      ['browser:', '  host: docker', '  launch_args: [ok]', '  container:', '    memory: lots', '  colour: blue'].join(
        '\n',
      ),
    );
    expect(problems.map((p) => [p.path, p.line])).toEqual([
      ['browser.host', 2],
      ['browser.launch_args[0]', 3],
      ['browser.container.memory', 5],
      ['browser.colour', 6],
    ]);
  });

  it('points at the offending value', () => {
    const [p] = problemsOf('browser:\n  blocked_sites:\n    - example.com\n    - https://x.example.com\n');
    expect(p).toMatchObject({ path: 'browser.blocked_sites[1]', line: 4, column: 7 });
  });

  it('resolves a few aliases like any YAML file', () => {
    const config = parseHostConfig('browser: {host: &h container, owner_hosts: {local: *h}}', 'x');
    expect(config.browser.ownerHosts['local']).toBe('container');
  });

  it('refuses files over the size cap before parsing', () => {
    const huge = `# ${'x'.repeat(HOST_CONFIG_LIMITS.maxSourceBytes)}\n`;
    expect(problemsOf(huge)[0].message).toMatch(/limit is 65536/);
  });

  it('lists the allowed keys when a key is unknown', () => {
    expect(problemsOf('browser: {colour: blue}')[0].message).toBe(
      'browser.colour is not a known key under browser. Allowed: blocked_sites, launch_args, executable_path, dialog_timeout_seconds, host, container, owner_hosts.',
    );
  });

  it('says the error code, the file and what to do in the thrown message', () => {
    expect(() => parseHostConfig('browser: {host: docker}', '/home/me/.stageflow/config.yaml')).toThrow(
      /\/home\/me\/\.stageflow\/config\.yaml is invalid \(1 problem\); fix it and restart the Host:\n- \/home\/me\/\.stageflow\/config\.yaml:1:17: browser\.host must be local or container/,
    );
  });

  it('keeps owner_hosts safe from prototype keys', () => {
    const config = parseHostConfig('browser: {owner_hosts: {constructor: container}}', 'x');
    expect(Object.getPrototypeOf(config.browser.ownerHosts)).toBeNull();
    expect(config.browser.ownerHosts['constructor']).toBe('container');
  });
});
