import { LIVE_VIEW_TICKET_PATTERN } from '@stageflow/contracts';
import { isRevokedBy, isTicketShaped, newTicket, ticketDigest, ticketOpens, ticketRecord } from './ticket-rules';

const binding = { runId: 'r1', stageId: 'login', attempt: 2, sessionId: 'sf-r1-login-2' };
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

describe('tickets', () => {
  it('are 256 random bits in base64url, and different every time', () => {
    const a = newTicket();
    expect(a).toMatch(LIVE_VIEW_TICKET_PATTERN);
    expect(newTicket()).not.toBe(a);
    expect(newTicket(() => Buffer.alloc(32, 0xff))).toBe('_'.repeat(42) + '8');
  });

  it('are stored under a digest that does not contain them', () => {
    const ticket = newTicket();
    expect(ticketDigest(ticket)).toMatch(/^[0-9a-f]{64}$/);
    expect(ticketDigest(ticket)).not.toContain(ticket);
    expect(ticketDigest(ticket)).toBe(ticketDigest(ticket));
  });

  it('are recognised by shape before any lookup', () => {
    expect(isTicketShaped(newTicket())).toBe(true);
    expect(isTicketShaped('short')).toBe(false);
    expect(isTicketShaped(undefined)).toBe(false);
    expect(isTicketShaped(`${newTicket()}x`)).toBe(false);
  });
});

describe('a ticket opens the view', () => {
  const record = ticketRecord(binding, 'interactive', T0, 60);

  it('records what it was issued for and until when', () => {
    expect(record).toEqual({ ...binding, mode: 'interactive', issuedAt: '2026-03-01T10:00:00.000Z', expiresAt: '2026-03-01T10:01:00.000Z' });
  });

  it('of its own run and stage, before it expires', () => {
    expect(ticketOpens(record, { runId: 'r1', stageId: 'login' }, T0 + 59_999)).toBe(true);
  });

  it('not once it expired, even if Redis has not dropped it yet', () => {
    expect(ticketOpens(record, { runId: 'r1', stageId: 'login' }, T0 + 60_000)).toBe(false);
  });

  it('not of another stage or run', () => {
    expect(ticketOpens(record, { runId: 'r1', stageId: 'other' }, T0)).toBe(false);
    expect(ticketOpens(record, { runId: 'r2', stageId: 'login' }, T0)).toBe(false);
  });
});

describe('revocation', () => {
  const interactive = ticketRecord(binding, 'interactive', T0, 60);
  const viewOnly = ticketRecord(binding, 'view-only', T0, 60);
  const otherStage = ticketRecord({ ...binding, stageId: 'work' }, 'view-only', T0, 60);
  const retry = ticketRecord({ ...binding, attempt: 3, sessionId: 'sf-r1-login-3' }, 'interactive', T0, 60);

  it('at run end takes every ticket of the run', () => {
    for (const r of [interactive, viewOnly, otherStage, retry]) expect(isRevokedBy(r, { runId: 'r1' })).toBe(true);
    expect(isRevokedBy(interactive, { runId: 'r2' })).toBe(false);
  });

  it('at a stage attempt\'s end takes that stage\'s tickets up to that attempt', () => {
    const end = { runId: 'r1', stageId: 'login', attempt: 2 };
    expect(isRevokedBy(interactive, end)).toBe(true);
    expect(isRevokedBy(viewOnly, end)).toBe(true);
    expect(isRevokedBy(otherStage, end)).toBe(false);
    expect(isRevokedBy(retry, end)).toBe(false);
  });

  it('at a gate answer takes the interactive tickets only: watching goes on until the stage ends', () => {
    const answer = { runId: 'r1', stageId: 'login', mode: 'interactive' as const };
    expect(isRevokedBy(interactive, answer)).toBe(true);
    expect(isRevokedBy(retry, answer)).toBe(true);
    expect(isRevokedBy(viewOnly, answer)).toBe(false);
  });
});
