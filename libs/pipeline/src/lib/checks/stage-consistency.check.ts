import type { ConditionAst } from '../pipeline.model';
import type { DiagnosticSink } from '../loader/diagnostic.sink';
import type { StageDraft } from '../loader/stage.reader';
import type { PipelineGraph } from './pipeline-graph';

/**
 * An `if` that reads `output.<name>` where the `from` stage's output_schema
 * is a closed object without `<name>`: the value is always null, which is
 * almost always a typo.
 */
export function checkConditionFields(
  graph: PipelineGraph,
  sink: DiagnosticSink,
): void {
  for (const edge of graph.edges) {
    const condition = edge.draft.condition;
    const from = graph.stages.get(edge.from);
    const schema = from?.outputSchema ?? from?.impliedOutputSchema;
    const implied = from?.outputSchema === undefined;
    if (
      !condition ||
      typeof schema !== 'object' ||
      schema['additionalProperties'] !== false
    )
      continue;
    const props = schema['properties'];
    if (typeof props !== 'object' || props === null || Array.isArray(props))
      continue;
    if (
      ['$ref', 'allOf', 'anyOf', 'oneOf', 'patternProperties'].some((k) =>
        Object.hasOwn(schema, k),
      )
    )
      continue;
    const names = Object.keys(props);
    for (const field of new Set(outputFields(condition))) {
      if (names.includes(field)) continue;
      sink.warning(
        'condition_unknown_field',
        edge.draft.ifAt ?? edge.draft.at,
        implied
          ? `The if on ${edge.from} → ${edge.to} reads output.${field}, but no extract step of "${edge.from}" writes "${field}", so it is always null.`
          : `The if on ${edge.from} → ${edge.to} reads output.${field}, but the output_schema of "${edge.from}" has no "${field}" and allows no other properties, so it is always null.`,
        implied
          ? `Use an extracted field (${names.join(', ') || 'none extracted'}), or add an extract step with field: ${field} to "${edge.from}".`
          : `Use a declared property (${names.join(', ') || 'none declared'}), or add "${field}" to the output_schema of "${edge.from}".`,
      );
    }
  }
}

function outputFields(ast: ConditionAst): string[] {
  switch (ast.type) {
    case 'literal':
      return [];
    case 'path':
      return ast.root === 'output' && ast.path.length > 0 ? [ast.path[0]] : [];
    case 'not':
      return outputFields(ast.operand);
    default:
      return [...outputFields(ast.left), ...outputFields(ast.right)];
  }
}

/**
 * Stages that share a profile should agree on `headed`: headless Chrome sends
 * a different user agent, so the site sees two devices. Human login gates
 * (`verify: browser_login`) are left out: they always get a visible browser.
 */
export function checkProfileHeaded(
  stages: readonly StageDraft[],
  sink: DiagnosticSink,
): void {
  const first = new Map<string, StageDraft>();
  for (const stage of stages) {
    const profile = stage.browser?.block.profile;
    if (
      !profile ||
      !stage.browser ||
      stage.definition?.verify === 'browser_login'
    )
      continue;
    const reference = first.get(profile);
    if (!reference?.browser) {
      first.set(profile, stage);
      continue;
    }
    if (reference.browser.block.headed === stage.browser.block.headed) continue;
    const mode = (s: StageDraft): string =>
      s.browser?.block.headed ? 'headed' : 'headless';
    sink.warning(
      'profile_headed_mismatch',
      stage.browser.headedAt,
      `Stage "${stage.id}" runs profile "${profile}" ${mode(stage)}, but stage "${reference.id}" runs it ${mode(reference)}. Headless Chrome reports a different user agent, so the site sees two devices and may drop the login.`,
      `Use the same headed value for every stage with profile "${profile}".`,
    );
  }
}
