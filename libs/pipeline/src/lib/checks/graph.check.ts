import type { DiagnosticSink } from '../loader/diagnostic.sink';
import type { PipelineDraft } from '../loader/pipeline.reader';
import { closest } from '../loader/yaml-node.reader';
import { edgeWhen, PipelineGraph, type GraphEdge } from './pipeline-graph';

/**
 * Checks ids and edges: duplicates, references, cycles, then reachability.
 * Returns the graph when it is a well-formed DAG (so later checks can walk
 * it), `undefined` otherwise.
 */
export function checkGraph(
  draft: PipelineDraft,
  sink: DiagnosticSink,
): PipelineGraph | undefined {
  let broken = false;
  const firstById = new Map<string, number>();
  for (const stage of draft.stages) {
    if (stage.id === undefined) continue;
    const firstLine = firstById.get(stage.id);
    if (firstLine === undefined) {
      firstById.set(stage.id, stage.idAt.line);
      continue;
    }
    broken = true;
    sink.error(
      'duplicate_stage_id',
      stage.idAt,
      `Stage id "${stage.id}" is already used by the stage on line ${firstLine}.`,
      'Give every stage its own id; edges refer to stages by id.',
    );
  }

  const ids = [...firstById.keys()];
  const edges: GraphEdge[] = [];
  const seen = new Map<string, number>();
  for (const edge of draft.edges) {
    if (edge.from === undefined || edge.to === undefined) {
      broken = true;
      continue;
    }
    let known = true;
    for (const end of ['from', 'to'] as const) {
      const id = edge[end] as string;
      if (firstById.has(id)) continue;
      known = false;
      const suggestion = closest(id, ids);
      sink.error(
        'unknown_stage_reference',
        end === 'from' ? edge.fromAt : edge.toAt,
        `Edge ${end} "${id}" names no stage.${suggestion ? ` Did you mean "${suggestion}"?` : ''}`,
        suggestion
          ? `Change it to "${suggestion}", or add a stage with id "${id}".`
          : `Use the id of a stage in this pipeline (${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''}), or add a stage with id "${id}".`,
      );
    }
    if (!known) {
      broken = true;
      continue;
    }
    if (edge.from === edge.to) {
      broken = true;
      sink.error(
        'cycle',
        edge.at,
        `Stage "${edge.from}" has an edge to itself.`,
        'Remove the edge. To run a stage again on failure, use retries.',
      );
      continue;
    }
    const key = `${edge.from}\u0000${edge.to}`;
    const firstLine = seen.get(key);
    if (firstLine !== undefined) {
      sink.error(
        'duplicate_edge',
        edge.at,
        `The edge ${edge.from} → ${edge.to} is already declared on line ${firstLine}.`,
        'Keep one edge per pair of stages. To combine conditions, write one if with "and" / "or".',
      );
      continue;
    }
    seen.set(key, edge.at.line);
    edges.push({
      from: edge.from,
      to: edge.to,
      draft: edge,
      when: edgeWhen(edge),
    });
  }
  if (broken) return undefined;

  const graph = new PipelineGraph(draft.stages, edges);
  if (reportCycles(graph, sink)) return undefined;
  reportUnreachable(graph, sink);
  return graph;
}

/** Depth-first, iterative (a long chain must not overflow the stack); one report per back edge. */
function reportCycles(graph: PipelineGraph, sink: DiagnosticSink): boolean {
  const state = new Map<string, 'active' | 'done'>();
  let found = false;
  for (const start of graph.stages.keys()) {
    if (state.has(start)) continue;
    const stack: Array<{ id: string; next: number }> = [{ id: start, next: 0 }];
    state.set(start, 'active');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const children = graph.children.get(frame.id) ?? [];
      if (frame.next >= children.length) {
        state.set(frame.id, 'done');
        stack.pop();
        continue;
      }
      const edge = children[frame.next++];
      const seen = state.get(edge.to);
      if (seen === undefined) {
        state.set(edge.to, 'active');
        stack.push({ id: edge.to, next: 0 });
      } else if (seen === 'active') {
        found = true;
        const loop = stack
          .slice(stack.findIndex((f) => f.id === edge.to))
          .map((f) => f.id);
        sink.error(
          'cycle',
          edge.draft.at,
          `These edges form a cycle: ${[...loop, edge.to].join(' → ')}. Stages run once each, so none of them could start.`,
          `Remove an edge of the cycle, e.g. this one (${edge.from} → ${edge.to}). To repeat a stage on failure, use retries.`,
        );
      }
    }
  }
  return found;
}

/**
 * A stage is unreachable when no run can start it (see the catalog, "Which
 * stages run"). The analysis treats every `if` that reads a path as able to go
 * either way, and folds only conditions made of literals (`if: "false"`).
 */
function reportUnreachable(graph: PipelineGraph, sink: DiagnosticSink): void {
  const canRun = new Map<string, boolean>();
  const canSkip = new Map<string, boolean>();
  for (const id of graph.topologicalOrder()) {
    const parents = graph.parents.get(id) ?? [];
    if (parents.length === 0) {
      canRun.set(id, true);
      canSkip.set(id, false);
      continue;
    }
    const runs = (e: GraphEdge): boolean => canRun.get(e.from) === true;
    const skips = (e: GraphEdge): boolean => canSkip.get(e.from) === true;
    const blocking = parents.filter((e) => e.when === 'never' && !skips(e));
    const run =
      blocking.length === 0 &&
      parents.some((e) => runs(e) && e.when !== 'never');
    canRun.set(id, run);
    canSkip.set(
      id,
      !run ||
        parents.some((e) => runs(e) && e.when !== 'always') ||
        parents.every(skips),
    );
    if (run) continue;
    const stage = graph.stages.get(id);
    if (!stage) continue;
    if (blocking.length > 0) {
      const edge = blocking[0];
      sink.error(
        'unreachable_stage',
        stage.idAt,
        `Stage "${id}" can never run: the if on ${edge.from} → ${id} (${JSON.stringify(edge.draft.if)}) is always false, and "${edge.from}" always runs, which skips "${id}".`,
        `Fix the condition on ${edge.from} → ${id} so it reads output or input, or remove the stage.`,
      );
    } else {
      sink.error(
        'unreachable_stage',
        stage.idAt,
        `Stage "${id}" can never run: ${parents.map((e) => (e.when === 'never' ? `the if on ${e.from} → ${id} is always false` : `"${e.from}" never runs`)).join(', and ')}.`,
        'Fix the always-false condition upstream, or remove the stage.',
      );
    }
  }
}
