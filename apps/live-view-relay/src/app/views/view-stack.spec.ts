import { ViewStack, WINDOW_OPEN_MATCH_MS } from './view-stack';

const tab = { targetId: 'TAB', sessionId: 'S-TAB', url: 'http://site/login' };

describe('ViewStack', () => {
  it('follows a popup opened by the shown page, and a popup of that popup', () => {
    const stack = new ViewStack({ ...tab });
    expect(stack.isPopup({ targetId: 'P1', openerId: 'TAB', url: '' }, 0)).toBe(true);
    stack.push({ targetId: 'P1', sessionId: 'S-P1', url: 'http://idp/' });
    expect(stack.isPopup({ targetId: 'P2', openerId: 'P1', url: '' }, 0)).toBe(true);
    stack.push({ targetId: 'P2', sessionId: 'S-P2', url: 'http://idp/2fa' });
    expect(stack.top.targetId).toBe('P2');
    expect(stack.depth).toBe(2);
  });

  it('ignores pages another tab opened, and pages it already has', () => {
    const stack = new ViewStack({ ...tab });
    expect(stack.isPopup({ targetId: 'X', openerId: 'OTHER-STAGE-TAB', url: '' }, 0)).toBe(false);
    expect(stack.isPopup({ targetId: 'X', url: 'http://site/' }, 0)).toBe(false);
    expect(stack.isPopup({ targetId: 'TAB', url: '' }, 0)).toBe(false);
  });

  it('returns to the opener when the shown popup closes; a closed popup below the top changes nothing shown', () => {
    const stack = new ViewStack({ ...tab });
    stack.push({ targetId: 'P1', sessionId: 'S-P1', url: 'http://idp/' });
    stack.push({ targetId: 'P2', sessionId: 'S-P2', url: 'http://idp/2' });
    expect(stack.remove('P1')).toBe(false);
    expect(stack.top.targetId).toBe('P2');
    expect(stack.remove('P2')).toBe(true);
    expect(stack.top.targetId).toBe('TAB');
    expect(stack.remove('TAB')).toBe(false);
    expect(stack.root.targetId).toBe('TAB');
  });

  it('takes an opener-less page (Ctrl- or middle-click) with the URL of a recent windowOpen as its popup, once', () => {
    const stack = new ViewStack({ ...tab });
    stack.windowOpened('http://site/help', 1000);
    expect(stack.awaitsOpen(1000)).toBe(true);
    expect(stack.isPopup({ targetId: 'N1', url: 'http://site/other' }, 1100)).toBe(false);
    expect(stack.isPopup({ targetId: 'N1', url: 'http://site/help' }, 1100)).toBe(true);
    expect(stack.isPopup({ targetId: 'N2', url: 'http://site/help' }, 1200)).toBe(false);
    stack.windowOpened('http://site/late', 2000);
    expect(stack.isPopup({ targetId: 'N3', url: 'http://site/late' }, 2000 + WINDOW_OPEN_MATCH_MS)).toBe(false);
    expect(stack.awaitsOpen(2000 + WINDOW_OPEN_MATCH_MS)).toBe(false);
  });

  it('finds pages by session and target, and tracks the shown address', () => {
    const stack = new ViewStack({ ...tab });
    expect(stack.bySession('S-TAB')?.targetId).toBe('TAB');
    expect(stack.bySession(undefined)).toBeUndefined();
    expect(stack.setUrl('TAB', 'http://site/home')).toBe(true);
    expect(stack.setUrl('TAB', 'http://site/home')).toBe(false);
    expect(stack.top.url).toBe('http://site/home');
  });

  it('starts over on a reopened tab, handing back the pages it leaves', () => {
    const stack = new ViewStack({ ...tab });
    stack.push({ targetId: 'P1', sessionId: 'S-P1', url: 'http://idp/' });
    stack.windowOpened('http://x/', 0);
    const left = stack.replaceRoot({ targetId: 'TAB2', sessionId: 'S-TAB2', url: 'http://site/login' });
    expect(left.map((p) => p.targetId)).toEqual(['TAB', 'P1']);
    expect(stack.all().map((p) => p.targetId)).toEqual(['TAB2']);
    expect(stack.awaitsOpen(0)).toBe(false);
  });
});

describe('ViewStack, pages opened by a viewer\'s click without an opener', () => {
  it('takes the next new page after a middle or Ctrl click, once, within the window', () => {
    const stack = new ViewStack({ ...tab });
    stack.openerlessClick(1000);
    expect(stack.awaitsOpen(1000)).toBe(true);
    expect(stack.isPopup({ targetId: 'N1', url: 'http://site/anything' }, 1500)).toBe(true);
    expect(stack.isPopup({ targetId: 'N2', url: 'http://site/anything' }, 1600)).toBe(false);
    stack.openerlessClick(2000);
    expect(stack.isPopup({ targetId: 'N3', url: '' }, 2000 + WINDOW_OPEN_MATCH_MS)).toBe(false);
  });

  it('prefers the page whose URL windowOpen named', () => {
    const stack = new ViewStack({ ...tab });
    stack.openerlessClick(0);
    stack.windowOpened('http://site/named', 0);
    expect(stack.isPopup({ targetId: 'N1', url: 'http://site/named' }, 10)).toBe(true);
    // The click's expectation is still there for the next page.
    expect(stack.isPopup({ targetId: 'N2', url: 'http://site/other' }, 10)).toBe(true);
  });
});
