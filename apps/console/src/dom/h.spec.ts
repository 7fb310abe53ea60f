import { h, svg } from './h';

/** Just enough of a document to see what h() builds: elements, attributes, text nodes, listeners. */
class FakeNode {
  readonly children: FakeNode[] = [];
  readonly attributes = new Map<string, string>();
  readonly listeners = new Map<string, unknown>();
  constructor(
    readonly kind: 'element' | 'text',
    readonly name: string,
    readonly data = '',
    readonly ns?: string,
  ) {}
  appendChild(child: FakeNode): FakeNode {
    this.children.push(child);
    return child;
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
  }
  addEventListener(type: string, listener: unknown): void {
    this.listeners.set(type, listener);
  }
  get textContent(): string {
    return this.kind === 'text' ? this.data : this.children.map((c) => c.textContent).join('');
  }
}

beforeAll(() => {
  (globalThis as unknown as { document: unknown }).document = {
    createElement: (tag: string) => new FakeNode('element', tag),
    createElementNS: (ns: string, tag: string) => new FakeNode('element', tag, '', ns),
    createTextNode: (data: string) => new FakeNode('text', '#text', data),
  };
});
afterAll(() => {
  delete (globalThis as unknown as { document?: unknown }).document;
});

describe('h(): text from pages and stages stays text', () => {
  it('turns every string child into a text node, markup and all', () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const el = h('pre', { class: 'log' }, hostile, 42, null, false, ['a', 'b']) as unknown as FakeNode;
    expect(el.children.map((c) => c.kind)).toEqual(['text', 'text', 'text', 'text']);
    expect(el.children.every((c) => c.children.length === 0)).toBe(true);
    expect(el.textContent).toBe(hostile + '42ab');
    expect(el.attributes.get('class')).toBe('log');
  });

  it('refuses inline handlers and URLs other than the console’s own', () => {
    expect(() => h('a', { onclick: 'alert(1)' })).toThrow(/inline handler/);
    expect(() => h('a', { href: 'javascript:alert(1)' })).toThrow(/refusing href/);
    expect(() => h('a', { href: '//evil.example/' })).toThrow(/refusing href/);
    expect(() => h('a', { href: 'https://evil.example/' })).toThrow(/refusing href/);
    expect((h('a', { href: '/runs/r-1' }) as unknown as FakeNode).attributes.get('href')).toBe('/runs/r-1');
    expect((h('a', { href: 'blob:http://x/1', download: 'out.txt' }) as unknown as FakeNode).attributes.get('download')).toBe('out.txt');
  });

  it('adds listeners under "on", skips absent attributes and builds SVG in its namespace', () => {
    const click = () => undefined;
    const button = h('button', { on: { click }, disabled: false, hidden: true, title: undefined }) as unknown as FakeNode;
    expect(button.listeners.get('click')).toBe(click);
    expect([...button.attributes]).toEqual([['hidden', '']]);
    const text = svg('text', { x: 1 }, '<tspan>') as unknown as FakeNode;
    expect(text.ns).toBe('http://www.w3.org/2000/svg');
    expect(text.textContent).toBe('<tspan>');
  });
});
