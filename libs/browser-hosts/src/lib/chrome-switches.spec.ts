import { buildChromeArgs, HOST_SWITCHES, switchValue } from './chrome-switches';

const base = {
  launchArgs: [] as string[],
  userDataDir: '/home/op/.stageflow/browser/local/shop',
  browserId: 'run-1.shop',
  hostId: 'local',
  headless: false,
  runningAsRoot: false,
};

describe('buildChromeArgs', () => {
  it('puts the host switches first, then launch args, then the adapter’s own switches and about:blank', () => {
    const args = buildChromeArgs({ ...base, launchArgs: ['--lang=de-DE', '--use-gl=angle'] });
    expect(args.slice(0, HOST_SWITCHES.length)).toEqual(HOST_SWITCHES);
    expect(args.slice(HOST_SWITCHES.length, HOST_SWITCHES.length + 2)).toEqual(['--lang=de-DE', '--use-gl=angle']);
    expect(args).toEqual(
      expect.arrayContaining([
        `--user-data-dir=${base.userDataDir}`,
        '--remote-debugging-port=0',
        '--stageflow-host=local',
        '--stageflow-browser-id=run-1.shop',
      ]),
    );
    expect(args.at(-1)).toBe('about:blank');
    expect(args).not.toContain('--headless=new');
    expect(args).not.toContain('--no-sandbox');
  });

  it('lists a host switch repeated in launch args once', () => {
    const args = buildChromeArgs({ ...base, launchArgs: ['--deny-permission-prompts', '--no-first-run', '--x=1'] });
    expect(args.filter((a) => a === '--deny-permission-prompts')).toHaveLength(1);
    expect(args.filter((a) => a === '--no-first-run')).toHaveLength(1);
    expect(args[HOST_SWITCHES.length]).toBe('--x=1');
  });

  it('adds --headless=new only for headless, and --no-sandbox only as root (once)', () => {
    expect(buildChromeArgs({ ...base, headless: true })).toContain('--headless=new');
    const root = buildChromeArgs({ ...base, runningAsRoot: true, launchArgs: ['--no-sandbox'] });
    expect(root.filter((a) => a === '--no-sandbox')).toHaveLength(1);
  });

  it.each([
    ['--user-data-dir=/tmp/elsewhere'],
    ['--remote-debugging-port=9222'],
    ['--remote-debugging-address=0.0.0.0'],
    ['--remote-allow-origins=*'],
    ['--Headless'],
    ['--stageflow-browser-id=other'],
  ])('refuses the adapter-owned switch %s', (arg) => {
    expect(() => buildChromeArgs({ ...base, launchArgs: [arg] })).toThrow(
      expect.objectContaining({ code: 'launch_arg_rejected' }),
    );
  });

  it.each([['https://example.com'], ['-user-data-dir=/x'], ['--a\n--b'], ['']])('refuses %j (not one switch)', (arg) => {
    expect(() => buildChromeArgs({ ...base, launchArgs: [arg] })).toThrow(
      expect.objectContaining({ code: 'launch_arg_rejected' }),
    );
  });

  it('refuses a browser id that is not one safe segment', () => {
    for (const browserId of ['', '../x', 'a b', '-rf', 'a/b']) {
      expect(() => buildChromeArgs({ ...base, browserId })).toThrow(expect.objectContaining({ code: 'browser_id_invalid' }));
    }
  });

  it('switchValue reads a switch back from argv', () => {
    const args = buildChromeArgs(base);
    expect(switchValue(args, '--stageflow-browser-id')).toBe('run-1.shop');
    expect(switchValue(args, '--missing')).toBeUndefined();
  });
});
