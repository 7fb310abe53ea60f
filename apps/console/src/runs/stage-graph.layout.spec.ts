import { layoutStageGraph, NODE_WIDTH } from './stage-graph.layout';

describe('the stage graph layout', () => {
  it('puts each stage one column after its furthest parent, in pipeline order within a column', () => {
    // check → login → work; check → work (the join topology), plus an independent stage.
    const layout = layoutStageGraph(
      ['check', 'login', 'work', 'lint'],
      [
        { from: 'check', to: 'login', if: 'not output.logged_in' },
        { from: 'check', to: 'work' },
        { from: 'login', to: 'work' },
      ],
    );
    const at = Object.fromEntries(layout.nodes.map((n) => [n.id, [n.layer, n.row]]));
    expect(at).toEqual({ check: [0, 0], login: [1, 0], work: [2, 0], lint: [0, 1] });
    expect(layout.edges.map((e) => `${e.from}>${e.to}${e.if ? '?' : ''}`)).toEqual(['check>login?', 'check>work', 'login>work']);
    // Every edge points right.
    for (const e of layout.edges) {
      const [x1, , , , , , x2] = e.path.replace(/[MC,]/g, ' ').trim().split(/\s+/).map(Number);
      expect(x2).toBeGreaterThan(x1);
    }
    expect(layout.width).toBeGreaterThanOrEqual(3 * NODE_WIDTH);
  });

  it('ignores edges to unknown stages and does not loop on a cycle', () => {
    const layout = layoutStageGraph(['a', 'b'], [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'a' },
      { from: 'a', to: 'ghost' },
    ]);
    expect(layout.nodes).toHaveLength(2);
    expect(layout.edges).toHaveLength(2);
    expect(Math.max(...layout.nodes.map((n) => n.layer))).toBeLessThan(2);
  });
});
