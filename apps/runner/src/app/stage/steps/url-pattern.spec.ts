import { keyDefinition } from './press-keys';
import { urlMatches } from './url-pattern';

describe('urlMatches', () => {
  it.each([
    ['/account', 'http://x.test/account?tab=1', true],
    ['/account', 'http://x.test/login', false],
    ['*/account*', 'http://x.test/account', true],
    ['*/account*', 'http://x.test/login?next=/account', true],
    ['http://x.test/*', 'http://x.test/a/b', true],
    ['http://x.test/*', 'https://x.test/a', false],
    ['*/done', 'http://x.test/done', true],
    ['*/done', 'http://x.test/done/more', false],
    ['a*a', 'a', false],
    ['a*a', 'aa', true],
    ['*', '', true],
  ])('%j against %j is %s', (pattern, url, expected) => {
    expect(urlMatches(pattern, url)).toBe(expected);
  });
});

describe('keyDefinition', () => {
  it('types Enter as a carriage return, so it submits a form', () => {
    expect(keyDefinition('Enter')).toEqual({ key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' });
  });

  it('moves focus with Tab without typing anything', () => {
    expect(keyDefinition('Tab').text).toBeUndefined();
  });

  it('gives letters and digits their physical key', () => {
    expect(keyDefinition('q')).toEqual({ key: 'q', code: 'KeyQ', keyCode: 81, text: 'q' });
    expect(keyDefinition('7')).toEqual({ key: '7', code: 'Digit7', keyCode: 55, text: '7' });
    expect(keyDefinition('/')).toEqual({ key: '/', code: '', keyCode: 0, text: '/' });
  });
});
