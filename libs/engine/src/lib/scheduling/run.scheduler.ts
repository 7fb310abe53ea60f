import { isTerminalRunState, isTerminalStageState, SLOT_STAGE_STATES, StageState } from '@stageflow/contracts';
import { isLoginGate, type Pipeline } from '@stageflow/pipeline';
import { decideJoin } from './join.rule';
import { pipelineGraph } from './pipeline.graph';
import type { PlanAction, PlanDeps, PlannedStage, RunPlanInput } from './run-plan';

/** Stage states that end a run as failed. */
const FAILURE_STATES: readonly StageState[] = ['failed', 'timed_out', 'cancelled'];
/** Stage states that move on without an operator. */
/** How a stage parked for a browser profile's lease states its reason (`waitingReason` in @stageflow/leases). */
const LEASE_WAIT_PREFIX = 'waiting for browser profile';
const MOVING_STATES: readonly StageState[] = ['ready', 'queued', 'running'];

/**
 * Decides what happens next in a run: the engine's whole state machine, with
 * no I/O. Given the pipeline and the current stage states it returns the
 * transitions to apply, in order:
 * 1. a failed, timed-out or cancelled stage fails the run: every stage not yet
 *    ended is cancelled (queued and running ones are killed by the engine);
 * 2. pending stages whose parents have all ended are decided by the join rule
 *    (ready or skipped), parents before children, so skips propagate in one
 *    pass; a ready stage whose input does not fit its input schema fails;
 * 3. ready gates open (waiting, no slot); ready job stages (run, steps) are queued while
 *    fewer than `maxActiveStages` stages are queued or running, in pipeline order;
 * 4. the run becomes success (every stage ended), waiting (no stage is ready,
 *    queued or running: only open gates and the stages behind them are left)
 *    or running again (after a gate was answered).
 * The run becomes running from queued when a runner starts its first stage,
 * not here.
 */
export function planAdvance(pipeline: Pipeline, run: RunPlanInput, deps: PlanDeps): PlanAction[] {
  if (isTerminalRunState(run.runState)) return [];
  const graph = pipelineGraph(pipeline);
  const work: Record<string, PlannedStage> = { ...run.stages };
  const actions: PlanAction[] = [];

  const firstFailure = pipeline.stages.find((s) => FAILURE_STATES.includes(work[s.id]?.state));
  if (firstFailure) return failRun(pipeline, work, firstFailure.id, actions);

  for (const stageId of graph.topological) {
    if (work[stageId]?.state !== 'pending') continue;
    const decision = decideJoin(stageId, graph.incoming(stageId), work, run.input, deps.evaluate);
    if (decision.kind === 'wait') continue;
    if (decision.kind === 'skip') {
      actions.push({ type: 'stage-skipped', stageId, reason: decision.reason });
      work[stageId] = { ...work[stageId], state: 'skipped', reason: decision.reason };
      continue;
    }
    const problem = deps.checkInput(graph.stage(stageId), decision.input);
    if (problem) {
      actions.push({ type: 'stage-failed', stageId, reason: problem });
      work[stageId] = { ...work[stageId], state: 'failed', reason: problem };
      return failRun(pipeline, work, stageId, actions);
    }
    actions.push({ type: 'stage-ready', stageId, input: decision.input });
    work[stageId] = { ...work[stageId], state: 'ready' };
  }

  let active = pipeline.stages.filter((s) => SLOT_STAGE_STATES.includes(work[s.id]?.state)).length;
  for (const stage of pipeline.stages) {
    const current = work[stage.id];
    if (current?.state !== 'ready') continue;
    // A human login gate is queued like a job: a runner opens its browser, then it waits.
    if (stage.kind === 'gate' && !isLoginGate(stage)) {
      actions.push({ type: 'gate-opened', stageId: stage.id, message: stage.message });
      work[stage.id] = { ...current, state: 'waiting' };
    } else if (active < run.maxActiveStages) {
      const attempt = Math.max(1, current.attempt);
      actions.push({ type: 'stage-queued', stageId: stage.id, attempt });
      work[stage.id] = { ...current, state: 'queued', attempt };
      active++;
    }
  }

  const open = pipeline.stages.map((s) => work[s.id]).filter((s) => s && !isTerminalStageState(s.state));
  if (open.length === 0) {
    actions.push({ type: 'run-state', state: 'success' });
  } else if (!open.some((s) => MOVING_STATES.includes(s.state))) {
    // Only gates, stages parked for a browser-profile lease (job stages that
    // wait) and the stages behind them are left: the run waits, and says for what.
    const leaseWait = pipeline.stages.find((s) => work[s.id]?.state === 'waiting' && work[s.id]?.reason?.startsWith(LEASE_WAIT_PREFIX));
    const reason = leaseWait ? (work[leaseWait.id].reason ?? 'waiting for a browser profile') : 'waiting for an operator';
    if (run.runState !== 'waiting') actions.push({ type: 'run-state', state: 'waiting', reason });
  } else if (run.runState === 'waiting') {
    actions.push({ type: 'run-state', state: 'running' });
  }
  return actions;
}

function failRun(
  pipeline: Pipeline,
  work: Record<string, PlannedStage>,
  failedId: string,
  actions: PlanAction[],
): PlanAction[] {
  const failed = work[failedId];
  const what = failed.state === 'timed_out' ? 'timed out' : failed.state === 'cancelled' ? 'was cancelled' : 'failed';
  const reason = `stage "${failedId}" ${what}${failed.reason ? `: ${failed.reason}` : ''}`;
  for (const stage of pipeline.stages) {
    const current = work[stage.id];
    if (!current || isTerminalStageState(current.state)) continue;
    actions.push({
      type: 'stage-cancelled',
      stageId: stage.id,
      reason: `run failed: stage "${failedId}" ${what}`,
      wasActive: SLOT_STAGE_STATES.includes(current.state),
    });
  }
  actions.push({ type: 'run-state', state: 'failed', reason });
  return actions;
}
