import { foldCondition } from '../condition/condition.evaluator';
import type { EdgeDraft } from '../loader/pipeline.reader';
import type { StageDraft } from '../loader/stage.reader';

/** An edge whose ends both name existing stages. */
export interface GraphEdge {
  from: string;
  to: string;
  draft: EdgeDraft;
  /** `always`: no `if`, or one that folds to true; `never`: folds to not-true; else `conditional`. */
  when: 'always' | 'conditional' | 'never';
}

/** The stage graph of a pipeline that passed the reference and cycle checks. */
export class PipelineGraph {
  readonly stages = new Map<string, StageDraft>();
  readonly parents = new Map<string, GraphEdge[]>();
  readonly children = new Map<string, GraphEdge[]>();

  constructor(
    stages: readonly StageDraft[],
    readonly edges: readonly GraphEdge[],
  ) {
    for (const stage of stages) {
      if (stage.id === undefined) continue;
      this.stages.set(stage.id, stage);
      this.parents.set(stage.id, []);
      this.children.set(stage.id, []);
    }
    for (const edge of edges) {
      this.children.get(edge.from)?.push(edge);
      this.parents.get(edge.to)?.push(edge);
    }
  }

  /** Stage ids, parents before children (Kahn; stable in file order). Assumes no cycle. */
  topologicalOrder(): string[] {
    const remaining = new Map(
      [...this.parents].map(([id, edges]) => [id, edges.length]),
    );
    const ready = [...this.stages.keys()].filter(
      (id) => remaining.get(id) === 0,
    );
    const order: string[] = [];
    for (let next = 0; next < ready.length; next++) {
      const id = ready[next];
      order.push(id);
      for (const edge of this.children.get(id) ?? []) {
        const left = (remaining.get(edge.to) ?? 0) - 1;
        remaining.set(edge.to, left);
        if (left === 0) ready.push(edge.to);
      }
    }
    return order;
  }

  private reach?: {
    index: Map<string, number>;
    all: Uint32Array[];
    conditional: Uint32Array[];
  };

  /**
   * Whether some path `from` → … → `to` takes at least one conditional edge
   * (edges that can never be taken are left out).
   */
  reachesConditionally(from: string, to: string): boolean {
    const reach = this.reachability();
    const a = reach.index.get(from);
    const b = reach.index.get(to);
    return (
      a !== undefined && b !== undefined && hasBit(reach.conditional[a], b)
    );
  }

  /**
   * The first conditional edge on a path `from` → … → `to`, for messages
   * ("the if on check → login"); `undefined` when there is no such path.
   */
  conditionalBranch(from: string, to: string): GraphEdge | undefined {
    const reach = this.reachability();
    const target = reach.index.get(to);
    if (target === undefined || !this.reachesConditionally(from, to))
      return undefined;
    let current = from;
    for (let steps = 0; steps <= this.stages.size; steps++) {
      let next: GraphEdge | undefined;
      for (const edge of this.children.get(current) ?? []) {
        const child = reach.index.get(edge.to) as number;
        if (
          edge.when === 'conditional' &&
          (child === target || hasBit(reach.all[child], target))
        )
          return edge;
        if (edge.when === 'always' && hasBit(reach.conditional[child], target))
          next = edge;
      }
      if (!next) return undefined;
      current = next.to;
    }
    return undefined;
  }

  /**
   * Reachability bitsets for every stage, built once, children before
   * parents: O(edges × stages / 32), so even a 1 MiB pipeline stays fast.
   */
  private reachability(): {
    index: Map<string, number>;
    all: Uint32Array[];
    conditional: Uint32Array[];
  } {
    if (this.reach) return this.reach;
    const ids = [...this.stages.keys()];
    const index = new Map(ids.map((id, i) => [id, i]));
    const words = (ids.length + 31) >>> 5;
    const all = ids.map(() => new Uint32Array(words));
    const conditional = ids.map(() => new Uint32Array(words));
    for (const id of this.topologicalOrder().reverse()) {
      const i = index.get(id) as number;
      for (const edge of this.children.get(id) ?? []) {
        if (edge.when === 'never') continue;
        const c = index.get(edge.to) as number;
        setBit(all[i], c);
        orInto(all[i], all[c]);
        if (edge.when === 'conditional') {
          setBit(conditional[i], c);
          orInto(conditional[i], all[c]);
        } else {
          orInto(conditional[i], conditional[c]);
        }
      }
    }
    this.reach = { index, all, conditional };
    return this.reach;
  }
}

const setBit = (bits: Uint32Array, i: number): void => {
  bits[i >>> 5] |= 1 << (i & 31);
};
const hasBit = (bits: Uint32Array, i: number): boolean =>
  (bits[i >>> 5] & (1 << (i & 31))) !== 0;
const orInto = (target: Uint32Array, source: Uint32Array): void => {
  for (let w = 0; w < target.length; w++) target[w] |= source[w];
};

export function edgeWhen(draft: EdgeDraft): GraphEdge['when'] {
  if (!draft.condition) return 'always';
  const folded = foldCondition(draft.condition);
  if (!folded.known) return 'conditional';
  return folded.value === true ? 'always' : 'never';
}
