import type { RunEvent, RunRecord, RunState, StageEnvelope, StageRecord } from '@stageflow/contracts';

/**
 * The api's answers as the console reads them (docs/api.md, docs/profiles.md).
 * Run and event shapes come from the contracts lib; the rest mirror the api's
 * response DTOs, which live in the api app and are not importable here.
 */
export type { RunEvent, RunState, StageEnvelope };
export type { StageState } from '@stageflow/contracts';

export type RunSummary = RunRecord;

export interface RunStageView extends StageRecord {
  description?: string;
  browser?: { profile?: string; headed: boolean };
  verify?: 'browser_login';
}

export interface RunEdgeView {
  from: string;
  to: string;
  if?: string;
}

/** `GET /api/runs/:run` */
export interface RunView extends RunRecord {
  stages: RunStageView[];
  edges: RunEdgeView[];
}

export interface RunPage {
  items: RunSummary[];
  next?: string;
}

export interface EventPage {
  items: RunEvent[];
  last: number;
}

export interface PipelineSummary {
  name: string;
  stages: number;
  updatedAt: string;
}

export interface LeaseParty {
  runId: string;
  since: string;
  /** A holder that is a profile's "Check now", not a run. */
  check?: true;
}

/** A profile's last "Check now" (`POST /api/profiles/:name/check` answers the same). */
export interface ProfileCheckView {
  loggedIn: boolean;
  url: string;
  checkedAt: string;
}

/** `GET /api/profiles` item. */
export interface ProfileView {
  name: string;
  scope: string;
  createdAt: string;
  lease: { holder?: LeaseParty; waiters: LeaseParty[] };
  /** The default login check (a pipeline's `browser.check` fields), when one is set. */
  check?: { url: string; logged_out_url?: string; selector?: string; cookie?: string };
  lastCheck?: ProfileCheckView;
}

export const AUDIT_RECORD_TYPES = [
  'profile_created',
  'profile_used',
  'profile_deleted',
  'profile_checked',
  'navigation_outside_allowlist',
  'allowlist_unverified',
] as const;
export type AuditRecordType = (typeof AUDIT_RECORD_TYPES)[number];

export interface AuditRecord {
  at: string;
  type: AuditRecordType;
  profile: string;
  scope: string;
  runId?: string;
  stageId?: string;
  host?: string;
  reason?: string;
  /** `profile_checked`: the verdict. */
  result?: 'logged_in' | 'logged_out';
  /** `profile_deleted`: what went of the browser data outside the folder (the container host's volume). */
  browserData?: 'volume_removed' | 'none';
}

export interface AuditPage {
  items: AuditRecord[];
  next?: string;
}
