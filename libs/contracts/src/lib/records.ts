import type { RunState, StageState } from './states';

/**
 * What a stage produced, as stored and as returned by the API. Shaped after a
 * browser lane's structured result: `ok`, the stage id, its output,
 * artifacts and duration.
 */
export interface StageEnvelope {
  ok: boolean;
  stage: string;
  attempt: number;
  output: unknown;
  artifacts: string[];
  durationMs: number;
  /** Present when ok is false: what went wrong, in words. */
  error?: string;
}

/**
 * A human login gate's hand-off, stored with the gate and sent in `gate.opened`:
 * how the operator sees the browser, and the stable path of its live view
 * (a ticket is asked for separately; the path never carries one).
 */
export interface LoginGateInfo {
  handoff: 'local_window' | 'live_view';
  /** `/api/runs/<run>/stages/<stage>/live-view`. */
  livePath: string;
  /** The page the browser was opened at (`login_url`, or `check.url`). */
  url: string;
}

/** A gate's answer, stored on the gate stage. */
export interface GateAnswer {
  decision: 'accept' | 'reject';
  note?: string;
  at: string;
}

export interface RunRecord {
  id: string;
  pipeline: string;
  state: RunState;
  /** Why the run is in this state (e.g. the failing stage), in words. */
  reason?: string;
  input: unknown;
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  maxActiveStages: number;
}

export interface StageRecord {
  runId: string;
  id: string;
  kind: string;
  state: StageState;
  /** Why it waits, was skipped or failed, in words. */
  reason?: string;
  attempt: number;
  maxAttempts: number;
  startedAt?: string;
  endedAt?: string;
  envelope?: StageEnvelope;
  /** Last lines of stdout/stderr (bounded). */
  logTail: string[];
  gate?: { message: string; login?: LoginGateInfo; answer?: GateAnswer };
}
