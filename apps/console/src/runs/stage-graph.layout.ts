import type { RunEdgeView } from '../api/api.types';

export interface GraphNode {
  id: string;
  /** Column: the longest path from a root, so every edge points right. */
  layer: number;
  /** Row inside the column, in pipeline order. */
  row: number;
  x: number;
  y: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  if?: string;
  /** Cubic path from the right side of `from` to the left side of `to`. */
  path: string;
}

export interface GraphLayout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

export const NODE_WIDTH = 168;
export const NODE_HEIGHT = 52;
const GAP_X = 56;
const GAP_Y = 18;
const PAD = 8;

/**
 * Lays a pipeline's stages out left to right: a stage sits one column after
 * its furthest parent, stages of one column keep the pipeline's order. The
 * loader refuses cycles; should one reach here anyway, its stages stay in the
 * first column instead of looping.
 */
export function layoutStageGraph(stageIds: string[], edges: RunEdgeView[]): GraphLayout {
  const known = new Set(stageIds);
  const usable = edges.filter((e) => known.has(e.from) && known.has(e.to) && e.from !== e.to);
  const layer = new Map(stageIds.map((id) => [id, 0]));
  // Longest path by relaxation; at most |stages| rounds on a DAG.
  for (let round = 0; round < stageIds.length; round++) {
    let changed = false;
    for (const e of usable) {
      const next = (layer.get(e.from) ?? 0) + 1;
      if (next > (layer.get(e.to) ?? 0) && next < stageIds.length) {
        layer.set(e.to, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const rows = new Map<number, number>();
  const nodes: GraphNode[] = stageIds.map((id) => {
    const l = layer.get(id) ?? 0;
    const row = rows.get(l) ?? 0;
    rows.set(l, row + 1);
    return { id, layer: l, row, x: PAD + l * (NODE_WIDTH + GAP_X), y: PAD + row * (NODE_HEIGHT + GAP_Y) };
  });
  const at = new Map(nodes.map((n) => [n.id, n]));
  const graphEdges: GraphEdge[] = usable.map((e) => {
    const a = at.get(e.from) as GraphNode;
    const b = at.get(e.to) as GraphNode;
    const x1 = a.x + NODE_WIDTH;
    const y1 = a.y + NODE_HEIGHT / 2;
    const x2 = b.x;
    const y2 = b.y + NODE_HEIGHT / 2;
    const bend = Math.max(24, (x2 - x1) / 2);
    const path = `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
    return e.if === undefined ? { from: e.from, to: e.to, path } : { from: e.from, to: e.to, if: e.if, path };
  });
  const layers = Math.max(0, ...nodes.map((n) => n.layer)) + 1;
  const maxRows = Math.max(0, ...rows.values());
  return {
    nodes,
    edges: graphEdges,
    width: PAD * 2 + layers * NODE_WIDTH + (layers - 1) * GAP_X,
    height: PAD * 2 + maxRows * NODE_HEIGHT + Math.max(0, maxRows - 1) * GAP_Y,
  };
}
