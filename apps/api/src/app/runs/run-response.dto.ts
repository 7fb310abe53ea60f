import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  RUN_EVENT_TYPES,
  RUN_STATES,
  STAGE_STATES,
  type GateAnswer,
  type RunEvent,
  type RunEventType,
  type RunRecord,
  type RunState,
  type StageEnvelope,
  type StageRecord,
  type StageState,
} from '@stageflow/contracts';
import type { RunEdgeView, RunPage, RunStageView, RunView } from '@stageflow/engine';

export class StageEnvelopeDto {
  @ApiProperty()
  ok!: boolean;
  @ApiProperty({ description: 'Stage id.' })
  stage!: string;
  @ApiProperty()
  attempt!: number;
  @ApiProperty({ description: 'The stage output (any JSON).' })
  output!: unknown;
  @ApiProperty({ type: [String] })
  artifacts!: string[];
  @ApiProperty()
  durationMs!: number;
  @ApiPropertyOptional({ description: 'What went wrong, when ok is false.' })
  error?: string;

  static from(e: StageEnvelope): StageEnvelopeDto {
    return omitUndefined({ ok: e.ok, stage: e.stage, attempt: e.attempt, output: e.output, artifacts: e.artifacts, durationMs: e.durationMs, error: e.error });
  }
}

export class GateAnswerDto {
  @ApiProperty({ enum: ['accept', 'reject'] })
  decision!: 'accept' | 'reject';
  @ApiPropertyOptional()
  note?: string;
  @ApiProperty({ format: 'date-time' })
  at!: string;

  static from(a: GateAnswer): GateAnswerDto {
    return omitUndefined({ decision: a.decision, note: a.note, at: a.at });
  }
}

export class LoginGateDto {
  @ApiProperty({ enum: ['local_window', 'live_view'], description: 'How the operator sees the browser: a window on the Host\'s screen, or the live view in the console.' })
  handoff!: 'local_window' | 'live_view';
  @ApiProperty({ example: '/api/runs/r_1/stages/login/live-view', description: 'Stable path of the live view (ask for a ticket to open it; the path never carries one).' })
  livePath!: string;
  @ApiProperty({ description: 'The page the browser was opened at (login_url, or check.url).' })
  url!: string;
}

export class GateDto {
  @ApiProperty({ description: 'What the operator is asked.' })
  message!: string;
  @ApiPropertyOptional({ type: LoginGateDto, description: 'Only on a human login gate (verify: browser_login) once its browser is open.' })
  login?: LoginGateDto;
  @ApiPropertyOptional({ type: GateAnswerDto })
  answer?: GateAnswerDto;
}

export class StageResponseDto {
  @ApiProperty()
  runId!: string;
  @ApiProperty()
  id!: string;
  @ApiProperty({ example: 'run', description: 'run, gate, …' })
  kind!: string;
  @ApiProperty({ enum: STAGE_STATES })
  state!: StageState;
  @ApiPropertyOptional({ description: 'Why it waits, was skipped or failed.' })
  reason?: string;
  @ApiProperty()
  attempt!: number;
  @ApiProperty()
  maxAttempts!: number;
  @ApiPropertyOptional({ format: 'date-time' })
  startedAt?: string;
  @ApiPropertyOptional({ format: 'date-time' })
  endedAt?: string;
  @ApiPropertyOptional({ type: StageEnvelopeDto })
  envelope?: StageEnvelopeDto;
  @ApiProperty({ type: [String], description: 'Last lines of stdout/stderr.' })
  logTail!: string[];
  @ApiPropertyOptional({ type: GateDto })
  gate?: GateDto;

  static from(s: StageRecord): StageResponseDto {
    return omitUndefined({
      runId: s.runId,
      id: s.id,
      kind: s.kind,
      state: s.state,
      reason: s.reason,
      attempt: s.attempt,
      maxAttempts: s.maxAttempts,
      startedAt: s.startedAt,
      endedAt: s.endedAt,
      envelope: s.envelope && StageEnvelopeDto.from(s.envelope),
      logTail: s.logTail,
      gate:
        s.gate &&
        omitUndefined({
          message: s.gate.message,
          login: s.gate.login && { handoff: s.gate.login.handoff, livePath: s.gate.login.livePath, url: s.gate.login.url },
          answer: s.gate.answer && GateAnswerDto.from(s.gate.answer),
        }),
    });
  }
}

export class RunSummaryDto {
  @ApiProperty()
  id!: string;
  @ApiProperty({ description: 'Pipeline name.' })
  pipeline!: string;
  @ApiProperty({ enum: RUN_STATES })
  state!: RunState;
  @ApiPropertyOptional({ description: 'Why the run is in this state.' })
  reason?: string;
  @ApiProperty({ description: 'The run input (any JSON).' })
  input!: unknown;
  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
  @ApiProperty({ format: 'date-time' })
  updatedAt!: string;
  @ApiPropertyOptional({ format: 'date-time' })
  endedAt?: string;
  @ApiProperty()
  maxActiveStages!: number;

  static from(r: RunRecord): RunSummaryDto {
    return omitUndefined({
      id: r.id,
      pipeline: r.pipeline,
      state: r.state,
      reason: r.reason,
      input: r.input,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      endedAt: r.endedAt,
      maxActiveStages: r.maxActiveStages,
    });
  }
}

export class StageBrowserDto {
  @ApiPropertyOptional({ description: 'The browser profile (a name); absent for a throw-away browser.', example: 'work' })
  profile?: string;
  @ApiProperty()
  headed!: boolean;
}

/** A stage of the run view: the record plus what its definition says, for drawing and labelling it. */
export class RunStageResponseDto extends StageResponseDto {
  @ApiPropertyOptional({ description: "The stage's description from the YAML." })
  description?: string;
  @ApiPropertyOptional({ type: StageBrowserDto, description: 'Present on stages with a `browser:` block.' })
  browser?: StageBrowserDto;
  @ApiPropertyOptional({ enum: ['browser_login'], description: '`browser_login` on a human login gate.' })
  verify?: 'browser_login';

  static override from(s: RunStageView): RunStageResponseDto {
    return omitUndefined({
      ...StageResponseDto.from(s),
      description: s.description,
      browser: s.browser && omitUndefined({ profile: s.browser.profile, headed: s.browser.headed }),
      verify: s.verify,
    });
  }
}

export class RunEdgeResponseDto {
  @ApiProperty()
  from!: string;
  @ApiProperty()
  to!: string;
  @ApiPropertyOptional({ description: 'The condition as written in the YAML.', example: 'not output.logged_in' })
  if?: string;

  static from(e: RunEdgeView): RunEdgeResponseDto {
    return omitUndefined({ from: e.from, to: e.to, if: e.if });
  }
}

export class RunResponseDto extends RunSummaryDto {
  @ApiProperty({ type: [RunStageResponseDto] })
  stages!: RunStageResponseDto[];
  @ApiProperty({ type: [RunEdgeResponseDto], description: "The edges of the run's pipeline (its snapshot), in pipeline order." })
  edges!: RunEdgeResponseDto[];

  static override from(v: RunView): RunResponseDto {
    return {
      ...RunSummaryDto.from(v),
      stages: v.stages.map((s) => RunStageResponseDto.from(s)),
      edges: v.edges.map((e) => RunEdgeResponseDto.from(e)),
    };
  }
}

export class RunPageResponseDto {
  @ApiProperty({ type: [RunSummaryDto], description: 'Newest first.' })
  items!: RunSummaryDto[];
  @ApiPropertyOptional({ description: 'Pass as `cursor` for the next page; absent on the last page.' })
  next?: string;

  static from(page: RunPage): RunPageResponseDto {
    return omitUndefined({ items: page.items.map((r) => RunSummaryDto.from(r)), next: page.next });
  }
}

export class RunEventDto {
  @ApiProperty({ description: 'Per run, from 1, no gaps.' })
  seq!: number;
  @ApiProperty()
  runId!: string;
  @ApiPropertyOptional()
  stageId?: string;
  @ApiProperty({ enum: RUN_EVENT_TYPES })
  type!: RunEventType;
  @ApiProperty({ format: 'date-time' })
  at!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Depends on `type` (docs/api.md).' })
  data!: unknown;

  static from(e: RunEvent): RunEventDto {
    return omitUndefined({ seq: e.seq, runId: e.runId, stageId: e.stageId, type: e.type, at: e.at, data: e.data });
  }
}

export class RunEventPageResponseDto {
  @ApiProperty({ type: [RunEventDto], description: 'Oldest first.' })
  items!: RunEventDto[];
  @ApiProperty({ description: 'Seq of the last item (or the `after` sent when there is none): pass it as `after` next.' })
  last!: number;
}

/** JSON drops undefined anyway; dropping it here keeps responses and test comparisons exact. */
function omitUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
