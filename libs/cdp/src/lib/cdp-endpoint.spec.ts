import fc from 'fast-check';
import { browserWsEndpoint, normalizeCdpEndpoint, parseDevToolsActivePort } from './cdp-endpoint';

const ID = '96f4a19d-f77f-4836-ab3d-cf3a057a959e';

describe('parseDevToolsActivePort', () => {
  it('reads the port and browser path and builds a 127.0.0.1 endpoint', () => {
    expect(parseDevToolsActivePort(`37939\n/devtools/browser/${ID}`)).toEqual({
      port: 37939,
      browserPath: `/devtools/browser/${ID}`,
      wsEndpoint: `ws://127.0.0.1:37939/devtools/browser/${ID}`,
    });
    expect(parseDevToolsActivePort(`37939\r\n/devtools/browser/${ID}\n`)?.port).toBe(37939);
  });

  it('treats every prefix of a file being written as not ready yet', () => {
    const full = `37939\n/devtools/browser/${ID}`;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: full.length - 1 }), (n) => {
        expect(parseDevToolsActivePort(full.slice(0, n))).toBeUndefined();
      }),
    );
  });

  it('rejects ports out of range and paths that are not a browser target', () => {
    expect(parseDevToolsActivePort(`0\n/devtools/browser/${ID}`)).toBeUndefined();
    expect(parseDevToolsActivePort(`70000\n/devtools/browser/${ID}`)).toBeUndefined();
    expect(parseDevToolsActivePort(`9222\n/devtools/page/${ID}`)).toBeUndefined();
    expect(parseDevToolsActivePort('')).toBeUndefined();
  });
});

describe('endpoints', () => {
  it('always uses 127.0.0.1 for a browser endpoint', () => {
    expect(browserWsEndpoint(9222, `/devtools/browser/${ID}`)).toBe(`ws://127.0.0.1:9222/devtools/browser/${ID}`);
    expect(() => browserWsEndpoint(0, `/devtools/browser/${ID}`)).toThrow(expect.objectContaining({ code: 'cdp_unreachable' }));
  });

  it('rewrites localhost to 127.0.0.1 (Node may resolve localhost to ::1) and keeps other hosts', () => {
    expect(normalizeCdpEndpoint(`ws://localhost:9222/devtools/browser/${ID}`)).toBe(
      `ws://127.0.0.1:9222/devtools/browser/${ID}`,
    );
    expect(normalizeCdpEndpoint('ws://browser-host:7000/cdp/abc')).toBe('ws://browser-host:7000/cdp/abc');
  });

  it('refuses URLs that are not WebSockets', () => {
    expect(() => normalizeCdpEndpoint('http://127.0.0.1:9222/json')).toThrow(
      expect.objectContaining({ code: 'cdp_unreachable' }),
    );
    expect(() => normalizeCdpEndpoint('not a url')).toThrow(expect.objectContaining({ code: 'cdp_unreachable' }));
  });
});
