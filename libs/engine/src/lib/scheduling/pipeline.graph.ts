import type { EdgeDefinition, Pipeline, StageDefinition } from '@stageflow/pipeline';

/** Lookups over a pipeline that the scheduler needs on every advance; built once per pipeline object. */
export interface PipelineGraph {
  stage(id: string): StageDefinition;
  /** Edges into `id`, in the order the pipeline lists them (the join's merge order). */
  incoming(id: string): readonly EdgeDefinition[];
  /** Stage ids, parents before children; ties keep the pipeline's order. */
  topological: readonly string[];
  /** JSON: for each stage in pipeline order, the 1-based indexes of its parents (for LOAD_PLAN_LUA). */
  parentIndexes: string;
}

const graphs = new WeakMap<Pipeline, PipelineGraph>();

/** The graph of a validated (acyclic) pipeline. Pipelines are treated as immutable, so graphs are cached. */
export function pipelineGraph(pipeline: Pipeline): PipelineGraph {
  let graph = graphs.get(pipeline);
  if (!graph) {
    graph = buildGraph(pipeline);
    graphs.set(pipeline, graph);
  }
  return graph;
}

function buildGraph(pipeline: Pipeline): PipelineGraph {
  const byId = new Map(pipeline.stages.map((s) => [s.id, s]));
  const incoming = new Map<string, EdgeDefinition[]>(pipeline.stages.map((s) => [s.id, []]));
  const outgoing = new Map<string, string[]>(pipeline.stages.map((s) => [s.id, []]));
  for (const edge of pipeline.edges) {
    incoming.get(edge.to)?.push(edge);
    outgoing.get(edge.from)?.push(edge.to);
  }
  const remaining = new Map(pipeline.stages.map((s) => [s.id, incoming.get(s.id)?.length ?? 0]));
  const order: string[] = [];
  const done = new Set<string>();
  // Kahn's algorithm, always taking the first free stage in pipeline order so
  // the order (and so every plan) is deterministic.
  while (order.length < pipeline.stages.length) {
    const next = pipeline.stages.find((s) => !done.has(s.id) && remaining.get(s.id) === 0);
    if (!next) throw new Error(`pipeline "${pipeline.name}" has a cycle; the loader should have refused it`);
    done.add(next.id);
    order.push(next.id);
    for (const child of outgoing.get(next.id) ?? []) remaining.set(child, (remaining.get(child) ?? 0) - 1);
  }
  return {
    stage(id) {
      const stage = byId.get(id);
      if (!stage) throw new Error(`pipeline "${pipeline.name}" has no stage "${id}"`);
      return stage;
    },
    incoming: (id) => incoming.get(id) ?? [],
    topological: order,
    parentIndexes: JSON.stringify(
      pipeline.stages.map((s) =>
        (incoming.get(s.id) ?? []).map((e) => pipeline.stages.findIndex((p) => p.id === e.from) + 1),
      ),
    ),
  };
}
