import type { DiagnosticSink } from '../loader/diagnostic.sink';
import { isLoginGate } from '../stage-kinds';
import type { PipelineGraph } from './pipeline-graph';
import { schemaMismatches } from './schema-compat';

/**
 * The "wrong edge" shape of a join. Stage J has parents P and Q, Q runs only
 * when a conditional edge below P is taken, and P → J has an `if` of its own.
 * J runs only if every succeeded parent's edge is true, so whenever the
 * conditional branch to Q runs, the `if` on P → J (usually its opposite)
 * is false and J is skipped without an error.
 *
 * Example: check → login (if not logged in), check → work (if logged in),
 * login → work. After a login, work is skipped. The fix is to keep the `if`
 * only on check → login.
 *
 * When the branch goes through a human login gate (`verify: browser_login`) the
 * shape is an error: the work a person just logged in for would never run. Other
 * branches get a warning (an error under strict).
 */
export function checkJoinSkipsWork(
  graph: PipelineGraph,
  sink: DiagnosticSink,
): void {
  for (const [id, parents] of graph.parents) {
    if (parents.length < 2) continue;
    for (const edge of parents) {
      if (edge.when !== 'conditional') continue;
      for (const other of parents) {
        if (other === edge) continue;
        const branch = graph.conditionalBranch(edge.from, other.from);
        if (!branch) continue;
        const viaLogin = [branch.to, other.from].some((stage) => isLoginGate(graph.stages.get(stage)?.definition));
        (viaLogin ? sink.error : sink.warning).call(
          sink,
          'join_skips_work',
          edge.draft.ifAt ?? edge.draft.at,
          `Stage "${id}" joins "${edge.from}" and "${other.from}". "${other.from}" runs only when the if on ${branch.from} → ${branch.to} is true, and the edge ${edge.from} → ${id} has an if too (${JSON.stringify(edge.draft.if)}). Whenever "${other.from}" runs, that if is usually false, so "${id}" is skipped silently.`,
          `Keep the if only on ${branch.from} → ${branch.to}; remove it from ${edge.from} → ${id}. Then "${id}" runs after "${edge.from}" when "${other.from}" is skipped, and after both when it runs.`,
        );
        break;
      }
    }
  }
}

/**
 * Each parent that declares an `output_schema` must fit the child's
 * `input_schema` (the join rule: the child may run after any one of them).
 * Single-parent stages get the same check under `input_mismatch`.
 */
export function checkInputSchemas(
  graph: PipelineGraph,
  sink: DiagnosticSink,
): void {
  for (const [id, parents] of graph.parents) {
    const child = graph.stages.get(id);
    if (!child?.inputSchema || parents.length === 0) continue;
    for (const edge of parents) {
      const parent = graph.stages.get(edge.from);
      const output = parent?.outputSchema ?? parent?.impliedOutputSchema;
      if (output === undefined) continue;
      const problems = schemaMismatches(output, child.inputSchema);
      if (problems.length === 0) continue;
      const join = parents.length > 1;
      sink.error(
        join ? 'join_input_mismatch' : 'input_mismatch',
        child.inputSchemaAt ?? child.idAt,
        `The output of "${edge.from}" does not fit the input_schema of "${id}": ${problems.join('; ')}.` +
          (join
            ? ` "${id}" joins ${parents.length} stages and may run after any of them, so each parent's output must fit.`
            : ''),
        parent?.outputSchema === undefined
          ? `Add extract steps to "${edge.from}" for what "${id}" requires (its output is exactly its extracted fields, as text), or relax input_schema of "${id}".`
          : `Make output_schema of "${edge.from}" guarantee what "${id}" requires (same property names, types and required list), or relax input_schema of "${id}".`,
      );
    }
  }
}
