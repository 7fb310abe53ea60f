import { agentBrowserNavigation, extractNavigations, hostsOutsideAllowlist, isHostAllowed, navigationHost } from '../index';

describe('agentBrowserNavigation', () => {
  it.each<[string[], string]>([
    [['open', 'https://a.test/x?token=1'], 'https://a.test/x?token=1'],
    [['goto', 'a.test'], 'https://a.test'],
    [['navigate', 'http://a.test'], 'http://a.test'],
    [['tab', 'new', 'b.test/login'], 'https://b.test/login'],
    [['open', 'localhost:3000/x'], 'https://localhost:3000/x'],
    [['--session', 'work', '--json', 'open', 'https://c.test'], 'https://c.test'],
    [['open', '--session', 'work', 'https://c.test', '--json'], 'https://c.test'],
    [['--session=work', 'open', 'https://c.test'], 'https://c.test'],
    [['--headed', 'false', 'open', 'https://d.test'], 'https://d.test'],
    [['--headed', 'open', 'https://d.test'], 'https://d.test'],
    [['-p', 'browserless', 'goto', 'e.test'], 'https://e.test'],
    [['--restore', 'open', 'f.test'], 'https://f.test'],
    [['--restore', 'work', 'open', 'f.test'], 'https://f.test'],
    [['--restore', '--json', 'open', 'f.test'], 'https://f.test'],
    [['tab', 'new', '--label', 'docs', 'g.test'], 'https://g.test'],
    [['tab', '--label', 'docs', 'new', 'g.test'], 'https://g.test'],
    [['open', '--init-script', './x.js', '--enable', 'react-devtools', 'h.test'], 'https://h.test'],
    [['open', 'about:blank'], 'about:blank'],
    [['open', 'HTTP://I.test'], 'HTTP://I.test'],
  ])('%j navigates to %s', (args, url) => {
    expect(agentBrowserNavigation(args)).toBe(url);
  });

  it.each<string[]>([
    [],
    ['open'],
    ['open', ''],
    ['tab', 'new'],
    ['tab', 'list'],
    ['tab', '2'],
    ['snapshot', '-i'],
    ['--session', 'open', 'x.test'],
    ['get', 'url'],
    ['read', 'https://x.test'],
    ['batch', 'open https://x.test'],
  ])('%j is not an explicit navigation', (...args) => {
    expect(agentBrowserNavigation(args)).toBeUndefined();
  });
});

describe('extractNavigations', () => {
  it.each([
    ['agent-browser open https://example.com/a', ['https://example.com/a']],
    [
      'agent-browser goto https://a.test && agent-browser navigate https://b.test/x?y=1',
      ['https://a.test', 'https://b.test/x?y=1'],
    ],
    ['agent-browser tab new https://c.test', ['https://c.test']],
    ['agent-browser open example.com/login', ['https://example.com/login']],
    ['agent-browser --session work --headed open "https://d.test/a b"', ['https://d.test/a b']],
    ['npx agent-browser open https://e.test; agent-browser snapshot -i', ['https://e.test']],
    ['/usr/local/bin/agent-browser open https://f.test', ['https://f.test']],
    ["bash -lc 'agent-browser open https://g.test | head'", ['https://g.test']],
    ['AGENT_BROWSER_SESSION=s agent-browser open \\\n  https://h.test', ['https://h.test']],
    ['x=$(agent-browser open https://i.test)', ['https://i.test']],
    ['agent-browser open https://j.test # then agent-browser open https://not-run.test', ['https://j.test']],
    ['agent-browser open about:blank', ['about:blank']],
  ])('%s', (line, urls) => {
    expect(extractNavigations(line)).toEqual(urls);
  });

  it.each([
    'agent-browser click @e3',
    'agent-browser tab new',
    'agent-browser tab 2',
    'agent-browser snapshot -i && agent-browser get url',
    'echo "open https://k.test"',
    'agent-browser open "$TARGET_URL"',
    'agent-browser open',
    'curl https://l.test',
  ])('finds no explicit navigation in %s', (line) => {
    expect(extractNavigations(line)).toEqual([]);
  });
});

describe('navigationHost', () => {
  it.each([
    ['https://Example.COM./a?token=x', 'example.com'],
    ['http://user:pass@a.test:8080/x', 'a.test'],
    ['https://b%C3%BCcher.test/', 'xn--bcher-kva.test'],
    ['https://bücher.test/', 'xn--bcher-kva.test'],
    ['http://[::1]:3000/', '[::1]'],
    ['https://127.0.0.1/', '127.0.0.1'],
  ])('%s has host %s', (url, host) => {
    expect(navigationHost(url)).toBe(host);
  });

  it.each(['about:blank', 'data:text/html,hi', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', 'https://', 'https://"x".test/'])(
    '%s has no host to check',
    (url) => {
      expect(navigationHost(url)).toBeUndefined();
    },
  );
});

describe('isHostAllowed', () => {
  it('matches exact hosts, and wildcard bases and their subdomains, case and trailing dot aside', () => {
    const allow = ['Example.com.', '*.github.com', '127.0.0.1'];
    expect(['example.com', 'github.com', 'api.github.com', 'a.b.github.com', '127.0.0.1'].filter((h) => isHostAllowed(h, allow))).toHaveLength(5);
    expect(['www.example.com', 'notgithub.com', 'github.com.evil.test', 'localhost', '127.0.0.2'].filter((h) => isHostAllowed(h, allow))).toEqual([]);
  });

  it('allows nothing with an empty list', () => {
    expect(isHostAllowed('example.com', [])).toBe(false);
  });
});

describe('hostsOutsideAllowlist', () => {
  const allow = ['example.com', '*.github.com'];

  it('allows exact hosts, and wildcard bases and their subdomains', () => {
    expect(
      hostsOutsideAllowlist(
        ['https://example.com/a', 'https://github.com', 'https://api.github.com/x', 'http://EXAMPLE.com.:8080/'],
        allow,
      ),
    ).toEqual([]);
  });

  it('reports each outside host once, in order, host only', () => {
    expect(
      hostsOutsideAllowlist(
        [
          'https://evil.test/steal?token=x',
          'https://www.example.com/',
          'https://evil.test/again',
          'https://notgithub.com',
          'https://github.com.evil.test',
        ],
        allow,
      ),
    ).toEqual(['evil.test', 'www.example.com', 'notgithub.com', 'github.com.evil.test']);
  });

  it('ignores URLs without a network host, and malformed ones', () => {
    expect(
      hostsOutsideAllowlist(['about:blank', 'data:text/html,hi', 'file:///etc/passwd', 'not a url'], allow),
    ).toEqual([]);
  });

  it('has nothing to audit without an allowlist', () => {
    expect(hostsOutsideAllowlist(['https://anything.test'], [])).toEqual([]);
  });

  it('works on what extractNavigations returns', () => {
    const urls = extractNavigations(
      'agent-browser open github.com && agent-browser tab new https://pastebin.test/raw/1',
    );
    expect(hostsOutsideAllowlist(urls, allow)).toEqual(['pastebin.test']);
  });
});
