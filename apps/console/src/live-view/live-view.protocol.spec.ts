import { liveViewSocketUrl, parseLiveViewMessage, parseTicket } from './live-view.protocol';

describe('the live-view protocol', () => {
  it('reads the relay messages the view acts on', () => {
    expect(parseLiveViewMessage('{"type":"frame-meta","deviceWidth":1280,"deviceHeight":720,"offsetTop":0,"pageScaleFactor":1}')).toEqual({
      type: 'frame-meta',
      deviceWidth: 1280,
      deviceHeight: 720,
      offsetTop: 0,
      pageScaleFactor: 1,
    });
    expect(parseLiveViewMessage('{"type":"url","url":"https://example.com/login"}')).toEqual({ type: 'url', url: 'https://example.com/login' });
    expect(parseLiveViewMessage('{"type":"dialog","dialogType":"prompt","message":"Name?","defaultPrompt":"ada","waitingFor":"the operator"}')).toEqual({
      type: 'dialog',
      dialogType: 'prompt',
      message: 'Name?',
      defaultPrompt: 'ada',
      waitingFor: 'the operator',
    });
    expect(parseLiveViewMessage('{"type":"dialog-closed","reason":"timeout"}')).toEqual({ type: 'dialog-closed', reason: 'timeout' });
    expect(parseLiveViewMessage('{"type":"popup","following":true}')).toEqual({ type: 'popup', following: true });
    expect(parseLiveViewMessage('{"type":"ended","reason":"gate_answered"}')).toEqual({ type: 'ended', reason: 'gate_answered' });
    expect(parseLiveViewMessage('{"type":"error","code":"input_refused","message":"view-only"}')).toEqual({ type: 'error', code: 'input_refused', message: 'view-only' });
  });

  it('refuses malformed messages instead of guessing', () => {
    for (const bad of [
      'nope',
      '{"type":"frame-meta","deviceWidth":0,"deviceHeight":720}',
      '{"type":"dialog","dialogType":"file","message":"x"}',
      '{"type":"dialog","dialogType":"alert","message":7}',
      '{"type":"popup","following":"yes"}',
      '{"type":"url"}',
      '{"type":"mystery"}',
    ]) {
      expect(parseLiveViewMessage(bad)).toBeUndefined();
    }
  });

  it('keeps the live-view socket on the console origin', () => {
    const ok = parseTicket({ ticket: 't/1+2', expiresAt: '2030-01-01T00:00:30Z', path: '/api/runs/r/stages/login/live-view' });
    if (!ok) throw new Error('a same-origin ticket path was refused');
    expect(liveViewSocketUrl(ok, { protocol: 'https:', host: 'host:3000' })).toBe('wss://host:3000/api/runs/r/stages/login/live-view?ticket=t%2F1%2B2');
    for (const path of ['//evil.example/x', 'ws://evil.example/x', '/a?b', '/a\\b', 'relative']) {
      expect(parseTicket({ ticket: 't', expiresAt: 'x', path })).toBeUndefined();
    }
    expect(parseTicket({ ticket: '', expiresAt: 'x', path: '/a' })).toBeUndefined();
  });
});
