import { agentBrowserNavigation, navigationHost } from '@stageflow/audit';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readActivity } from './agent-browser-activity';
import { ACTIVITY_HEADER, agentBrowserWrapperScript, shellQuote } from './agent-browser-wrapper';

/**
 * The generated wrapper, run by the real /bin/sh (dash on Debian, as in the runner
 * image) in front of a stand-in "real" agent-browser that reports what it got.
 */
describe('agent-browser wrapper script', () => {
  let root: string;
  let real: string;
  let wrapper: string;
  let activity: string;

  // The stand-in: argv one per line (NUL-safe enough: framed by markers), stdin, its pid, exit code from the env.
  const REAL = `#!/bin/sh
printf 'pid=%s\\n' "$$"
for a in "$@"; do printf '<%s>\\n' "$a"; done
if [ -n "$READ_STDIN" ]; then printf 'stdin=%s\\n' "$(cat)"; fi
printf 'to stderr\\n' >&2
if [ -n "$SLEEP" ]; then exec sleep "$SLEEP"; fi
exit "\${EXIT_CODE:-0}"
`;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "sf-abwrap-it's "));
    real = join(root, 'real bin', 'agent-browser');
    spawnSync('mkdir', ['-p', join(root, 'real bin'), join(root, 'wrap')]);
    writeFileSync(real, REAL, { mode: 0o755 });
    wrapper = join(root, 'wrap', 'agent-browser');
    activity = join(root, 'activity "x".jsonl');
    writeFileSync(wrapper, agentBrowserWrapperScript(real, activity), { mode: 0o700 });
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  beforeEach(() => writeFileSync(activity, `${ACTIVITY_HEADER}\n`));

  const run = (args: string[], env: Record<string, string> = {}, input?: string) =>
    spawnSync(wrapper, args, { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', ...env }, input });
  const lines = () => readFileSync(activity, 'utf8').split('\n').slice(1, -1).map((l) => JSON.parse(l) as Record<string, string>);
  const hosts = () => readActivity({ state: 'read', text: readFileSync(activity, 'utf8'), truncated: false });

  it('is a POSIX sh script that needs no node', () => {
    const script = readFileSync(wrapper, 'utf8');
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).not.toMatch(/\bnode\b/);
    expect(spawnSync('/bin/sh', ['-n', wrapper]).status).toBe(0);
  });

  it('passes arguments, stdin, stdout, stderr and the exit code through unchanged', () => {
    const args = ['eval', 'a "quoted" b', "it's", '', '  spaced  ', '$HOME `x`', 'line1\nline2', 'ümlaut', '*', '-'];
    const res = run(args, { READ_STDIN: '1', EXIT_CODE: '7' }, 'from stdin');
    expect(res.status).toBe(7);
    expect(res.stderr).toBe('to stderr\n');
    const out = res.stdout.split('\n');
    expect(out.slice(1, -2).join('\n')).toBe(args.map((a) => `<${a}>`).join('\n'));
    expect(out[out.length - 2]).toBe('stdin=from stdin');
    expect(lines()).toEqual([{ cmd: 'other' }]);
  });

  it('runs the real agent-browser in its own process, so signals reach it', async () => {
    const child = spawn(wrapper, ['wait', '5000'], { env: { PATH: '/usr/bin:/bin', SLEEP: '30' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    while (!out.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(out.split('\n')[0]).toBe(`pid=${child.pid}`);
    const exit = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
    child.kill('SIGTERM');
    await expect(exit).resolves.toEqual([null, 'SIGTERM']);
  });

  it('fails like a missing command when the real agent-browser is gone', () => {
    const gone = join(root, 'wrap', 'gone');
    writeFileSync(gone, agentBrowserWrapperScript(join(root, 'nowhere', 'agent-browser'), activity), { mode: 0o700 });
    const res = spawnSync(gone, ['open', 'a.test'], { encoding: 'utf8' });
    expect(res.status).toBe(127);
  });

  // argv -> what @stageflow/audit's reference parser says; the wrapper must agree.
  const FORMS: string[][] = [
    ['open', 'https://a.test/path?token=SECRET#frag'],
    ['goto', 'a.test'],
    ['navigate', 'http://b.test:8080/x'],
    ['tab', 'new', 'c.test/login'],
    ['tab', 'new', '--label', 'docs', 'https://docs.test'],
    ['tab', '--label', 'docs', 'new', 'https://docs2.test'],
    ['--session', 'work', '--json', 'open', 'https://d.test'],
    ['open', '--session', 'work', 'https://e.test', '--json'],
    ['--session=work', 'open', 'f.test'],
    ['--headed', 'false', 'open', 'g.test'],
    ['--headed', 'open', 'h.test'],
    ['-p', 'browserless', 'goto', 'i.test'],
    ['--restore', 'open', 'j.test'],
    ['--restore', 'saved', 'open', 'k.test'],
    ['--restore', '--json', 'open', 'l.test'],
    ['open', '--init-script', './x.js', '--enable', 'react-devtools', 'm.test'],
    ['open', 'localhost:3000/x'],
    ['open', 'http://localhost:3000/'],
    ['open', 'HTTPS://UPPER.Test/'],
    ['open', 'https://user:p%40ss@n.test/'],
    ['open', 'https://o.test.:443'],
    ['open', 'http://[::1]:9000/'],
    ['open', 'http://127.0.0.1:9000/'],
    ['open', 'https:p.test'],
    ['open', 'https:\\\\q.test\\path'],
    ['open', '//r.test/x'],
    ['open', 'https://bücher.test/'],
    ['open', 'https://xn--bcher-kva.test/'],
    ['open', 'https://s%2Et.test/'],
    ['open', 'https://%41%42.test/'],
    ['open', 'https://tab\tbed.test/'],
    ['open', 'about:blank'],
    ['open', 'data:text/html,<p>token=SECRET</p>'],
    ['open', 'file:///etc/passwd'],
    ['open', 'javascript:alert(1)'],
    ['open', 'https://'],
    ['open', 'https://a b.test/'],
    ['open', 'https://"quote".test/'],
    ['open', 'https://new\nline.test/'],
    ['open'],
    ['open', ''],
    ['tab', 'new'],
    ['tab', 'list'],
    ['tab', '2'],
    ['--session', 'open', 'x.test'],
    ['snapshot', '-i'],
    ['get', 'url'],
    ['read', 'https://read.test'],
    [],
  ];

  it.each(FORMS.map((args) => [JSON.stringify(args), args] as const))('records %s as the reference parser reads it', (_name, args) => {
    expect(run(args).status).toBe(0);
    const url = agentBrowserNavigation(args);
    const expected = url === undefined ? undefined : navigationHost(url);
    const reading = hosts();
    expect({ hosts: reading.navigationHosts, unverified: reading.unverified, calls: reading.calls }).toEqual({
      hosts: expected === undefined ? [] : [expected],
      unverified: undefined,
      calls: 1,
    });
  });

  it('names the navigation command, and writes nothing of a URL but scheme and host', () => {
    run(['open', 'https://user:pw@a.test:8443/p?token=SECRET#f']);
    run(['tab', 'new', 'b.test/x?sig=SECRET']);
    run(['goto', 'data:text/html,SECRET']);
    run(['fill', '@e3', 'SECRET']);
    expect(lines()).toEqual([
      { cmd: 'open', scheme: 'https', host: 'a.test' },
      { cmd: 'tab-new', scheme: 'https', host: 'b.test' },
      { cmd: 'goto', scheme: 'data' },
      { cmd: 'other' },
    ]);
    expect(readFileSync(activity, 'utf8')).not.toMatch(/SECRET|pw|8443|token|sig=/);
  });

  it('percent-encodes host bytes that could break the JSON line', () => {
    run(['open', 'https://bü"\t%41 .test/']);
    expect(lines()).toEqual([{ cmd: 'open', scheme: 'https', host: 'b%C3%BC%22%09%2541%20.test' }]);
  });

  it('keeps one whole line per call when calls run at once', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => new Promise((resolve) => spawn(wrapper, ['open', `h${i}.test`], { stdio: 'ignore' }).once('exit', resolve))),
    );
    const reading = hosts();
    expect(reading.unverified).toBeUndefined();
    expect(reading.calls).toBe(20);
    expect([...reading.navigationHosts].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `h${i}.test`).sort());
  });

  it('still runs agent-browser, silently, when the activity file or its folder is gone', () => {
    rmSync(activity);
    const res = run(['open', 'a.test'], { EXIT_CODE: '3' });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 3, stderr: 'to stderr\n' });
    // Recreated without the runner's header: the runner reports it unreadable.
    expect(readActivity({ state: 'read', text: readFileSync(activity, 'utf8'), truncated: false }).unverified).toBe('activity_unreadable');
    const elsewhere = join(root, 'wrap', 'dirless');
    writeFileSync(elsewhere, agentBrowserWrapperScript(real, join(root, 'no-such-dir', 'a.jsonl')), { mode: 0o700 });
    const res2 = spawnSync(elsewhere, ['open', 'a.test'], { encoding: 'utf8' });
    expect({ status: res2.status, stderr: res2.stderr }).toEqual({ status: 0, stderr: 'to stderr\n' });
  });

  it('adds little latency: no node start-up per call', () => {
    const fast = join(root, 'real bin', 'true-ab');
    writeFileSync(fast, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    chmodSync(fast, 0o755);
    const quick = join(root, 'wrap', 'quick');
    writeFileSync(quick, agentBrowserWrapperScript(fast, activity), { mode: 0o700 });
    const time = (file: string) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < 30; i++) spawnSync(file, ['open', `https://user:pw@bü${i}.test/x`]);
      return Number(process.hrtime.bigint() - start) / 1e6 / 30;
    };
    time(quick);
    const overhead = time(quick) - time(fast);
    // A node wrapper would cost 40 ms or more per call; dash costs about one.
    expect(overhead).toBeLessThan(20);
  });

  it('quotes paths for the shell', () => {
    expect(shellQuote("/a b/it's")).toBe("'/a b/it'\\''s'");
    expect(spawnSync('/bin/sh', ['-c', `printf %s ${shellQuote("/a b/it's $x")}`], { encoding: 'utf8' }).stdout).toBe("/a b/it's $x");
  });
});
