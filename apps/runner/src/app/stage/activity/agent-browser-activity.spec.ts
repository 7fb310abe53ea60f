import { ACTIVITY_HEADER } from './agent-browser-wrapper';
import { readActivity } from './agent-browser-activity';

const file = (...lines: string[]) => ({ state: 'read' as const, text: [ACTIVITY_HEADER, ...lines].map((l) => `${l}\n`).join(''), truncated: false });
const nav = (host: string, scheme = 'https', cmd = 'open') => JSON.stringify({ cmd, scheme, host });

describe('readActivity', () => {
  it('lists each navigation host once, in order, lowercased and in ASCII', () => {
    expect(
      readActivity(
        file(
          nav('B.test'),
          '{"cmd":"other"}',
          nav('a.test', 'http', 'goto'),
          nav('b.test', 'HTTPS', 'tab-new'),
          nav('b%C3%BCcher.test', 'https', 'navigate'),
          nav('%5B::1%5D'),
          nav('[::1]'),
        ),
      ),
    ).toEqual({ navigationHosts: ['b.test', 'a.test', 'xn--bcher-kva.test', '[::1]'], calls: 7 });
  });

  it('counts calls without a host to check: other schemes, no target, hosts no browser can open', () => {
    expect(
      readActivity(file('{"cmd":"open","scheme":"about"}', '{"cmd":"tab-new"}', '{"cmd":"open"}', nav('a%20b.test'), nav('a%22b.test'), nav('x', 'ftp'))),
    ).toEqual({ navigationHosts: [], calls: 6 });
  });

  it('reads a file with only the header as a stage that called nothing', () => {
    expect(readActivity(file())).toEqual({ navigationHosts: [], calls: 0 });
  });

  it('is unreadable when the file is gone', () => {
    expect(readActivity({ state: 'unreadable' })).toEqual({ navigationHosts: [], calls: 0, unverified: 'activity_unreadable' });
  });

  it('is unreadable, with the hosts it could read, when the header is missing (deleted or truncated during the stage)', () => {
    expect(readActivity({ state: 'read', text: `${nav('late.test')}\n`, truncated: false })).toEqual({
      navigationHosts: ['late.test'],
      calls: 1,
      unverified: 'activity_unreadable',
    });
    expect(readActivity({ state: 'read', text: '', truncated: false }).unverified).toBe('activity_unreadable');
  });

  it.each([
    ['a line the stage wrote', 'open https://evil.test'],
    ['an unknown command', JSON.stringify({ cmd: 'eval', scheme: 'https', host: 'x.test' })],
    ['an extra field', JSON.stringify({ cmd: 'open', scheme: 'https', host: 'x.test', url: 'https://x.test/?token=1' })],
    ['a host without scheme', JSON.stringify({ cmd: 'open', host: 'x.test' })],
    ['a host the wrapper would have encoded', JSON.stringify({ cmd: 'open', scheme: 'https', host: 'a b.test' })],
    ['a bad scheme', JSON.stringify({ cmd: 'open', scheme: '1x', host: 'x.test' })],
    ['not an object', '["open"]'],
  ])('is unreadable with %s, and keeps the sound lines', (_what, line) => {
    expect(readActivity(file(nav('ok.test'), line))).toEqual({ navigationHosts: ['ok.test'], calls: 1, unverified: 'activity_unreadable' });
  });

  it('is unreadable when its last line is torn', () => {
    const { text } = file(nav('ok.test'));
    expect(readActivity({ state: 'read', text: `${text}{"cmd":"op`, truncated: false }).unverified).toBe('activity_unreadable');
  });

  it('is too large when the file was cut at the size limit; its last whole lines still count', () => {
    const { text } = file(nav('a.test'));
    expect(readActivity({ state: 'read', text: `${text}{"cmd":"op`, truncated: true })).toEqual({
      navigationHosts: ['a.test'],
      calls: 1,
      unverified: 'activity_too_large',
    });
  });

  it('sends at most maxHosts hosts and says the list is cut', () => {
    expect(readActivity(file(nav('a.test'), nav('b.test'), nav('c.test')), 2)).toEqual({
      navigationHosts: ['a.test', 'b.test'],
      calls: 3,
      unverified: 'activity_too_large',
    });
  });
});
