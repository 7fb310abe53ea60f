import type { GateAnswer, RunRecord, RunState, StageEnvelope, StageRecord, StageState } from '@stageflow/contracts';

/**
 * Field names of the run and stage hashes. Values are strings; JSON where
 * noted. Fields not listed in RunRecord/StageRecord are engine internals and
 * never leave the engine.
 */
export const RUN_FIELDS = {
  id: 'id',
  pipeline: 'pipeline',
  state: 'state',
  reason: 'reason',
  /** JSON */
  input: 'input',
  createdAt: 'createdAt',
  updatedAt: 'updatedAt',
  endedAt: 'endedAt',
  maxActiveStages: 'maxActiveStages',
  /** JSON: the Pipeline as it was when the run started. */
  snapshot: 'snapshot',
} as const;

export const STAGE_FIELDS = {
  runId: 'runId',
  id: 'id',
  kind: 'kind',
  state: 'state',
  reason: 'reason',
  attempt: 'attempt',
  maxAttempts: 'maxAttempts',
  startedAt: 'startedAt',
  endedAt: 'endedAt',
  /** JSON StageEnvelope of the last attempt that ran. */
  envelope: 'envelope',
  /** JSON string[] */
  logTail: 'logTail',
  /** JSON { message, answer? } */
  gate: 'gate',
  /** JSON: the stage's input, set when it became ready. */
  input: 'input',
  /** Process group leader of the running attempt, its start time (from /proc) and host. */
  pid: 'pid',
  pidStart: 'pidStart',
  host: 'host',
  /** Consecutive sweeper checks that found no BullMQ job for this queued/running stage. */
  missingJobChecks: 'missingJobChecks',
  /** Browser profile a `waiting` run stage waits for (its run is queued for the lease); absent otherwise. */
  leaseProfile: 'leaseProfile',
  /** Times the stage was woken after waiting for its profile's lease (absent: never); its job's `wake`. */
  leaseWakes: 'leaseWakes',
} as const;

type Hash = Record<string, string>;

export function decodeRun(hash: Hash): RunRecord | undefined {
  if (!hash[RUN_FIELDS.id]) return undefined;
  return {
    id: hash[RUN_FIELDS.id],
    pipeline: hash[RUN_FIELDS.pipeline],
    state: hash[RUN_FIELDS.state] as RunState,
    ...(hash[RUN_FIELDS.reason] ? { reason: hash[RUN_FIELDS.reason] } : {}),
    input: parseJson(hash[RUN_FIELDS.input], null),
    createdAt: hash[RUN_FIELDS.createdAt],
    updatedAt: hash[RUN_FIELDS.updatedAt],
    ...(hash[RUN_FIELDS.endedAt] ? { endedAt: hash[RUN_FIELDS.endedAt] } : {}),
    maxActiveStages: Number(hash[RUN_FIELDS.maxActiveStages]),
  };
}

export function decodeStage(hash: Hash): StageRecord | undefined {
  if (!hash[STAGE_FIELDS.id]) return undefined;
  const gate = parseJson<{ message: string; answer?: GateAnswer } | undefined>(hash[STAGE_FIELDS.gate], undefined);
  const envelope = parseJson<StageEnvelope | undefined>(hash[STAGE_FIELDS.envelope], undefined);
  return {
    runId: hash[STAGE_FIELDS.runId],
    id: hash[STAGE_FIELDS.id],
    kind: hash[STAGE_FIELDS.kind],
    state: hash[STAGE_FIELDS.state] as StageState,
    ...(hash[STAGE_FIELDS.reason] ? { reason: hash[STAGE_FIELDS.reason] } : {}),
    attempt: Number(hash[STAGE_FIELDS.attempt] ?? 0),
    maxAttempts: Number(hash[STAGE_FIELDS.maxAttempts] ?? 1),
    ...(hash[STAGE_FIELDS.startedAt] ? { startedAt: hash[STAGE_FIELDS.startedAt] } : {}),
    ...(hash[STAGE_FIELDS.endedAt] ? { endedAt: hash[STAGE_FIELDS.endedAt] } : {}),
    ...(envelope ? { envelope } : {}),
    logTail: parseJson<string[]>(hash[STAGE_FIELDS.logTail], []),
    ...(gate ? { gate } : {}),
  };
}

export function parseJson<T>(text: string | undefined | null, fallback: T): T {
  if (text === undefined || text === null || text === '') return fallback;
  return JSON.parse(text) as T;
}
