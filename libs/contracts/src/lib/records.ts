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
  gate?: { message: string; answer?: GateAnswer };
}
