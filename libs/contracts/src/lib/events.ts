import type { LoginGateInfo, StageEnvelope } from './records';
import type { RunState, StageState } from './states';

/**
 * One entry of a run's history. The WebSocket sends the same shape. `seq` is
 * per run, gap-free and increasing from 1: a client that reconnects with the
 * last `seq` it saw receives exactly the events after it.
 */
export interface RunEvent<T extends RunEventType = RunEventType> {
  seq: number;
  runId: string;
  stageId?: string;
  type: T;
  at: string;
  data: RunEventData[T];
}

export interface RunEventData {
  'run.created': { pipeline: string; stages: string[] };
  'run.state': { state: RunState; reason?: string };
  'stage.state': { state: StageState; attempt: number; reason?: string };
  'stage.log': { stream: 'stdout' | 'stderr'; line: string };
  'stage.output': { envelope: StageEnvelope };
  'gate.opened': { message: string; login?: LoginGateInfo };
  'gate.answered': { decision: 'accept' | 'reject'; note?: string };
  'run.warning': { code: string; message: string };
}

export type RunEventType = keyof RunEventData;

export const RUN_EVENT_TYPES: readonly RunEventType[] = [
  'run.created',
  'run.state',
  'stage.state',
  'stage.log',
  'stage.output',
  'gate.opened',
  'gate.answered',
  'run.warning',
];
