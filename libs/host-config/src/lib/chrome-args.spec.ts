import { ChromeArgInvalidError, chromeArgs, HOST_SWITCHES, parseHostConfig } from '../index';

describe('chromeArgs', () => {
  it('starts every launch with the Host switches, --deny-permission-prompts first', () => {
    const args = chromeArgs(parseHostConfig('', 'x'));
    expect(args).toEqual([...HOST_SWITCHES]);
    expect(args[0]).toBe('--deny-permission-prompts');
    expect(args).toEqual(
      expect.arrayContaining([
        '--password-store=basic',
        '--disable-sync',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ]),
    );
  });

  it('puts launch_args after the Host switches, then the per-launch extras', () => {
    const config = parseHostConfig('browser: {launch_args: [--no-sandbox, --use-gl=angle]}', 'x');
    expect(chromeArgs(config, ['--headless=new'])).toEqual([
      ...HOST_SWITCHES,
      '--no-sandbox',
      '--use-gl=angle',
      '--headless=new',
    ]);
  });

  it('gives a repeated --deny-permission-prompts no effect, whatever its value', () => {
    const config = parseHostConfig(
      'browser: {launch_args: [--deny-permission-prompts, --deny-permission-prompts=0, --mute-audio]}',
      'x',
    );
    const args = chromeArgs(config);
    expect(args.filter((a) => a.startsWith('--deny-permission-prompts'))).toEqual(['--deny-permission-prompts']);
    expect(args.at(-1)).toBe('--mute-audio');
  });

  it('drops exact repeats but keeps an operator override of a value', () => {
    const config = parseHostConfig('browser: {launch_args: [--no-first-run, --password-store=gnome-libsecret]}', 'x');
    const args = chromeArgs(config);
    expect(args.filter((a) => a === '--no-first-run')).toHaveLength(1);
    expect(args.at(-1)).toBe('--password-store=gnome-libsecret');
  });

  it('refuses a malformed extra switch instead of letting agent-browser split it', () => {
    expect(() => chromeArgs(parseHostConfig('', 'x'), ['--window-size=1280,800'])).toThrow(ChromeArgInvalidError);
    expect(() => chromeArgs(parseHostConfig('', 'x'), ['headless'])).toThrow(/must start with "-"/);
  });

  it('cannot be mutated through HOST_SWITCHES', () => {
    expect(Object.isFrozen(HOST_SWITCHES)).toBe(true);
  });
});
