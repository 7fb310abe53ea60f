import type { StageRecord } from '@stageflow/contracts';
import type { Pipeline } from '@stageflow/pipeline';
import type { RunEdgeView, RunStageView } from '../engine.api';

/**
 * Adds to each stage record what its definition in the run's snapshot says
 * (description, browser profile, verify). Only names: the snapshot never holds
 * a path, and allow lists, URLs and commands stay out of the view.
 */
export function stageViews(records: StageRecord[], pipeline: Pipeline): RunStageView[] {
  const definitions = new Map(pipeline.stages.map((s) => [s.id, s]));
  return records.map((record) => {
    const definition = definitions.get(record.id);
    const view: RunStageView = { ...record };
    if (definition?.description !== undefined) view.description = definition.description;
    if (definition?.browser) {
      view.browser = { headed: definition.browser.headed };
      if (definition.browser.profile !== undefined) view.browser.profile = definition.browser.profile;
    }
    if (definition?.verify) view.verify = definition.verify;
    return view;
  });
}

/** The snapshot's edges as clients see them: ends and the condition's source text. */
export function edgeViews(pipeline: Pipeline): RunEdgeView[] {
  return pipeline.edges.map((e) => (e.if === undefined ? { from: e.from, to: e.to } : { from: e.from, to: e.to, if: e.if }));
}
