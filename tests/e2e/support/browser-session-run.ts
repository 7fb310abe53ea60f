/**
 * A run of examples/browser-session as the e2e specs read it: the login gate's
 * hand-off, attempts and envelopes on top of the api's run view.
 */
import { isTerminalRunState } from '@stageflow/contracts';
import type { RunView, StageView } from './stageflow-client';

export interface GateView {
  message: string;
  login?: { handoff: string; livePath: string; url: string };
  answer?: { decision: string };
}
export type Stage = StageView & { attempt: number; gate?: GateView; envelope?: { ok: boolean; output: Record<string, unknown>; artifacts?: string[] } };
export type Run = Omit<RunView, 'stages'> & { stages: Stage[] };

/** The run's stage `id`; a run without it is a broken test. */
export function stage(r: Run, id: string): Stage {
  const found = r.stages.find((s) => s.id === id);
  if (!found) throw new Error(`run ${r.id} has no stage ${id}`);
  return found;
}

export const ended = (r: Run): boolean => isTerminalRunState(r.state);
