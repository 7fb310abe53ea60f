import { extractNavigations, hostsOutsideAllowlist } from '../index';

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
