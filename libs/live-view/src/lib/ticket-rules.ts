import { LIVE_VIEW_TICKET_PATTERN, type LiveViewMode, type LiveViewTicketRecord } from '@stageflow/contracts';
import { createHash, randomBytes } from 'node:crypto';

/** A new ticket: 256 random bits, base64url (43 characters, no padding). */
export function newTicket(random: (bytes: number) => Buffer = randomBytes): string {
  return random(32).toString('base64url');
}

/** What Redis keys a ticket by: its SHA-256 (hex). A copy of Redis holds no ticket anyone could connect with. */
export function ticketDigest(ticket: string): string {
  return createHash('sha256').update(ticket, 'utf8').digest('hex');
}

/** Whether a string can be a ticket at all (checked before any Redis read). */
export function isTicketShaped(value: unknown): value is string {
  return typeof value === 'string' && LIVE_VIEW_TICKET_PATTERN.test(value);
}

/** The stage session a ticket is issued for. */
export interface TicketBinding {
  runId: string;
  stageId: string;
  attempt: number;
  sessionId: string;
}

/** The record of a ticket issued now. */
export function ticketRecord(binding: TicketBinding, mode: LiveViewMode, nowMs: number, ttlSeconds: number): LiveViewTicketRecord {
  return {
    runId: binding.runId,
    stageId: binding.stageId,
    attempt: binding.attempt,
    sessionId: binding.sessionId,
    mode,
    issuedAt: new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + ttlSeconds * 1000).toISOString(),
  };
}

/**
 * Whether a consumed ticket opens the view it is presented for: not expired (Redis
 * expires keys lazily, to the second; the record's own time is exact), and issued for
 * this run and stage. A ticket for another stage is refused like an unknown one.
 */
export function ticketOpens(record: LiveViewTicketRecord, path: { runId: string; stageId: string }, nowMs: number): boolean {
  return Date.parse(record.expiresAt) > nowMs && record.runId === path.runId && record.stageId === path.stageId;
}

/** Which unused tickets a revocation takes back. */
export interface TicketRevocation {
  runId: string;
  /** Only this stage's; all stages of the run when left out (the run ended). */
  stageId?: string;
  /** Only this attempt's and older ones; all attempts when left out. */
  attempt?: number;
  /** Only tickets of this mode (a gate answer ends the interactive view only); all when left out. */
  mode?: LiveViewMode;
}

export function isRevokedBy(record: LiveViewTicketRecord, revocation: TicketRevocation): boolean {
  if (record.runId !== revocation.runId) return false;
  if (revocation.stageId !== undefined && record.stageId !== revocation.stageId) return false;
  if (revocation.attempt !== undefined && record.attempt > revocation.attempt) return false;
  return revocation.mode === undefined || record.mode === revocation.mode;
}
