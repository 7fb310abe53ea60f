import type { ConditionAst, EdgeDefinition } from '@stageflow/pipeline';
import type { PlannedStage } from './run-plan';

/** What the join rule says about a stage whose parents have all ended. */
export type JoinDecision =
  | { kind: 'run'; input: unknown }
  | { kind: 'skip'; reason: string }
  /** Not decidable yet: a parent has not ended. */
  | { kind: 'wait' };

export type Evaluate = (ast: ConditionAst, scope: { output: unknown; input: unknown }) => boolean;

/**
 * The join rule (docs/run-engine.md, "Joins and conditions"). A stage is
 * decided once every parent has ended:
 * - it runs when every parent succeeded or was skipped, every edge from a
 *   successful parent has no condition or a true one, and at least one parent
 *   succeeded;
 * - it is skipped when an edge from a successful parent has a false condition,
 *   or when every parent was skipped.
 * A failed parent never reaches this rule: the run fails first.
 *
 * Input: a root gets the run input, a stage with one incoming edge gets that
 * parent's output, a join gets the shallow merge of its successful parents'
 * object outputs, in edge order (later edges win on equal keys).
 */
export function decideJoin(
  stageId: string,
  incoming: readonly EdgeDefinition[],
  stages: Readonly<Record<string, PlannedStage>>,
  runInput: unknown,
  evaluate: Evaluate,
): JoinDecision {
  if (incoming.length === 0) return { kind: 'run', input: runInput };
  const parents = incoming.map((edge) => ({ edge, parent: stages[edge.from] }));
  if (parents.some(({ parent }) => !parent || (parent.state !== 'success' && parent.state !== 'skipped'))) {
    return { kind: 'wait' };
  }
  const succeeded: PlannedStage[] = [];
  for (const { edge, parent } of parents) {
    if (parent.state !== 'success') continue;
    if (edge.condition && !evaluate(edge.condition, { output: parent.output, input: runInput })) {
      const text = edge.if ? ` (if: ${edge.if})` : '';
      return { kind: 'skip', reason: `the condition on edge ${edge.from} → ${stageId} is false${text}` };
    }
    succeeded.push(parent);
  }
  if (succeeded.length === 0) {
    const names = incoming.map((e) => e.from).join(', ');
    return { kind: 'skip', reason: `every parent was skipped (${names})` };
  }
  if (incoming.length === 1) return { kind: 'run', input: succeeded[0].output };
  const merged: Record<string, unknown> = {};
  for (const parent of succeeded) {
    if (isPlainObject(parent.output)) Object.assign(merged, parent.output);
  }
  return { kind: 'run', input: merged };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
