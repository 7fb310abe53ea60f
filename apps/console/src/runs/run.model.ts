import { isTerminalRunState, isTerminalStageState, type RunEventData } from '@stageflow/contracts';
import type { RunEdgeView, RunEvent, RunState, RunView, StageEnvelope, StageState } from '../api/api.types';

/** Log lines kept per stage in the page (a stage logs at most 2000 per attempt; retries add up). */
export const MAX_LOG_LINES = 3000;

export interface LogLine {
  attempt: number;
  stream: 'stdout' | 'stderr';
  line: string;
}

export interface StageModel {
  runId: string;
  id: string;
  kind: string;
  description?: string;
  browser?: { profile?: string; headed: boolean };
  verify?: 'browser_login';
  state: StageState;
  reason?: string;
  attempt: number;
  maxAttempts: number;
  startedAt?: string;
  endedAt?: string;
  envelope?: StageEnvelope;
  gate?: { message: string; answer?: { decision: 'accept' | 'reject'; note?: string; at: string } };
  logs: LogLine[];
  /** Lines dropped from the front to stay under MAX_LOG_LINES. */
  logsDropped: number;
}

export interface RunModel {
  id: string;
  pipeline: string;
  state: RunState;
  reason?: string;
  input: unknown;
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  maxActiveStages: number;
  stages: StageModel[];
  edges: RunEdgeView[];
  warnings: { code: string; message: string; at: string }[];
  /** Seq of the last event applied; 0 before any. */
  lastSeq: number;
}

/**
 * The run page's model: the run view for its shape, then every event of the
 * run's history applied in order (from seq 1), then live events. Logs come
 * only from `stage.log` events (the view's `logTail` would repeat them).
 */
export function runModelFromView(view: RunView): RunModel {
  return {
    id: view.id,
    pipeline: view.pipeline,
    state: view.state,
    reason: view.reason,
    input: view.input,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
    endedAt: view.endedAt,
    maxActiveStages: view.maxActiveStages,
    edges: view.edges ?? [],
    warnings: [],
    lastSeq: 0,
    stages: view.stages.map((s) => ({
      runId: view.id,
      id: s.id,
      kind: s.kind,
      description: s.description,
      browser: s.browser,
      verify: s.verify,
      state: s.state,
      reason: s.reason,
      attempt: s.attempt,
      maxAttempts: s.maxAttempts,
      startedAt: s.startedAt,
      endedAt: s.endedAt,
      envelope: s.envelope,
      gate: s.gate,
      logs: [],
      logsDropped: 0,
    })),
  };
}

/**
 * Applies one event; false when it was not applied (another run's, or a seq
 * already applied). Mutates the model: the page re-renders after a batch.
 */
export function applyRunEvent(model: RunModel, event: RunEvent): boolean {
  if (event.runId !== model.id || event.seq <= model.lastSeq) return false;
  model.lastSeq = event.seq;
  const stage = event.stageId === undefined ? undefined : model.stages.find((s) => s.id === event.stageId);
  switch (event.type) {
    case 'run.state': {
      const data = event.data as RunEventData['run.state'];
      model.state = data.state;
      model.reason = data.reason;
      model.updatedAt = event.at;
      model.endedAt = isTerminalRunState(data.state) ? event.at : undefined;
      break;
    }
    case 'stage.state': {
      if (!stage) break;
      const data = event.data as RunEventData['stage.state'];
      if (data.attempt !== stage.attempt) {
        stage.startedAt = undefined;
        stage.endedAt = undefined;
      }
      stage.state = data.state;
      stage.attempt = data.attempt;
      stage.reason = data.reason;
      if (data.state === 'running' || (data.state === 'waiting' && stage.kind === 'gate')) stage.startedAt ??= event.at;
      if (isTerminalStageState(data.state)) stage.endedAt = event.at;
      break;
    }
    case 'stage.log': {
      if (!stage) break;
      const data = event.data as RunEventData['stage.log'];
      stage.logs.push({ attempt: stage.attempt, stream: data.stream, line: data.line });
      if (stage.logs.length > MAX_LOG_LINES) {
        const drop = stage.logs.length - MAX_LOG_LINES;
        stage.logs.splice(0, drop);
        stage.logsDropped += drop;
      }
      break;
    }
    case 'stage.output':
      if (stage) stage.envelope = (event.data as RunEventData['stage.output']).envelope;
      break;
    case 'gate.opened':
      if (stage) stage.gate = { message: (event.data as RunEventData['gate.opened']).message };
      break;
    case 'gate.answered': {
      if (!stage) break;
      const data = event.data as RunEventData['gate.answered'];
      stage.gate = { message: stage.gate?.message ?? '', answer: { decision: data.decision, note: data.note, at: event.at } };
      break;
    }
    case 'run.warning': {
      const data = event.data as RunEventData['run.warning'];
      model.warnings.push({ code: data.code, message: data.message, at: event.at });
      break;
    }
    default:
      // run.created, and types added after this console was built: nothing to show.
      break;
  }
  return true;
}

/** Gates that wait for the operator now. */
export function openGates(model: RunModel): StageModel[] {
  // A login gate also waits (with no gate yet) while its run queues for the browser profile's lease: it is
  // open only once `gate.opened` came, or the panel would offer Accept and a live view of no browser.
  return model.stages.filter((s) => s.kind === 'gate' && s.state === 'waiting' && s.gate !== undefined && !s.gate.answer);
}

/** A human login gate: its panel carries the live view (docs/console.md). */
export function isLoginGate(stage: StageModel): boolean {
  return stage.kind === 'gate' && stage.verify === 'browser_login';
}

/** "Watch browser" is offered on a running stage that has a browser. */
export function canWatchBrowser(stage: StageModel): boolean {
  return stage.browser !== undefined && stage.state === 'running';
}
