import { ContractViolationError } from './errors';

/** The BullMQ queue every stage job goes through. */
export const STAGE_QUEUE = 'stages';
/** The only job name on {@link STAGE_QUEUE}. */
export const STAGE_JOB = 'run-stage';

/**
 * Payload of a stage job. The job carries ids only; the stage's definition and
 * input are read from the run record, so a replayed job never acts on stale data.
 */
export interface StageJobPayload {
  runId: string;
  stageId: string;
  /** 1-based attempt this job was enqueued for; a stale attempt is dropped. */
  attempt: number;
  /**
   * How many times this attempt was woken after waiting for its browser
   * profile's lease (absent: never). Each wake enqueues a job under a new id,
   * so re-queueing never has to wait for the parked job's id to come free,
   * and a job of an earlier wake is dropped at claim.
   */
  wake?: number;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Validates a job payload where it is consumed (the runner). Throws {@link ContractViolationError}. */
export function parseStageJobPayload(raw: unknown): StageJobPayload {
  const problems: string[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractViolationError('stage job payload', ['expected an object']);
  }
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (!['runId', 'stageId', 'attempt', 'wake'].includes(key)) problems.push(`unknown field "${key}"`);
  }
  if (typeof r['runId'] !== 'string' || !ID.test(r['runId'])) problems.push('runId must be an id string');
  if (typeof r['stageId'] !== 'string' || !ID.test(r['stageId'])) problems.push('stageId must be an id string');
  if (typeof r['attempt'] !== 'number' || !Number.isInteger(r['attempt']) || r['attempt'] < 1) {
    problems.push('attempt must be a positive integer');
  }
  const wake = r['wake'];
  if (wake !== undefined && (typeof wake !== 'number' || !Number.isInteger(wake) || wake < 1)) {
    problems.push('wake must be a positive integer when present');
  }
  if (problems.length) throw new ContractViolationError('stage job payload', problems);
  return {
    runId: r['runId'] as string,
    stageId: r['stageId'] as string,
    attempt: r['attempt'] as number,
    ...(wake !== undefined ? { wake: wake as number } : {}),
  };
}

/** Deterministic job id: BullMQ refuses a duplicate, so one attempt is enqueued at most once. */
export function stageJobId(p: StageJobPayload): string {
  return `${p.runId}.${p.stageId}.${p.attempt}${p.wake ? `.w${p.wake}` : ''}`;
}
