import { Logger } from '@nestjs/common';
import { NotFoundError, type LiveViewTicketRecord, type SessionRecord } from '@stageflow/contracts';
import type { RunsApi, RunView } from '@stageflow/engine';
import type { LiveViewTickets, StageSessionDirectory } from '@stageflow/live-view';
import { ViewAdmission } from './view-admission.service';

beforeAll(() => Logger.overrideLogger(false));

const TICKET = 'A'.repeat(43);
const record: LiveViewTicketRecord = {
  runId: 'r1',
  stageId: 'login',
  attempt: 1,
  sessionId: 'sf-r1-login-1',
  mode: 'interactive',
  issuedAt: '2030-01-01T00:00:00.000Z',
  expiresAt: '2030-01-01T00:01:00.000Z',
};
const session = { sessionId: 'sf-r1-login-1', runId: 'r1', stageId: 'login', attempt: 1 } as SessionRecord;

function setup(opts: { ticket?: LiveViewTicketRecord; run?: Partial<RunView> | 'missing'; session?: SessionRecord; redisDown?: boolean } = {}) {
  const consumed: string[] = [];
  const tickets = {
    consume: async (t: unknown) => {
      if (opts.redisDown) throw new Error('connect ECONNREFUSED');
      consumed.push(String(t));
      return 'ticket' in opts ? opts.ticket : record;
    },
  } as unknown as LiveViewTickets;
  const directory = { get: async () => ('session' in opts ? opts.session : session) } as unknown as StageSessionDirectory;
  const runs = {
    getRun: async () => {
      if (opts.run === 'missing') throw new NotFoundError('run_not_found', 'no such run');
      return { id: 'r1', state: 'waiting', stages: [{ id: 'login', gate: { message: 'Log in' } }], ...(opts.run ?? {}) } as RunView;
    },
  } as unknown as RunsApi;
  return { admission: new ViewAdmission(tickets, directory, runs), consumed };
}

const url = (query = `?ticket=${TICKET}`) => `/api/runs/r1/stages/login/live-view${query}`;

describe('ViewAdmission', () => {
  it('lets in a viewer with a good ticket for an open session', async () => {
    const { admission, consumed } = setup();
    expect(await admission.admit(url())).toEqual({ ok: true, ticket: record, session });
    expect(consumed).toEqual([TICKET]);
  });

  it('answers 404 off the live-view path and 401 without a ticket, saying how to get one', async () => {
    const { admission, consumed } = setup();
    expect(await admission.admit('/api/ws')).toMatchObject({ ok: false, status: 404, code: 'route_not_found' });
    expect(await admission.admit('/api/runs/r%201/stages/login/live-view?ticket=x')).toMatchObject({ status: 404 });
    expect(await admission.admit(url(''))).toMatchObject({ status: 401, code: 'ticket_missing', message: expect.stringContaining('POST /api/runs/r1/stages/login/live-view/tickets') });
    expect(consumed).toEqual([]);
  });

  it('refuses an unknown, used, expired or revoked ticket the same way', async () => {
    const { admission } = setup({ ticket: undefined });
    expect(await admission.admit(url())).toMatchObject({ status: 401, code: 'ticket_invalid', message: expect.stringContaining('each ticket opens one view') });
  });

  it('refuses when the run has ended or is gone', async () => {
    expect(await setup({ run: { state: 'cancelled' } }).admission.admit(url())).toMatchObject({ status: 409, code: 'live_view_closed', message: expect.stringContaining('has ended (cancelled)') });
    expect(await setup({ run: 'missing' }).admission.admit(url())).toMatchObject({ status: 409, code: 'live_view_closed' });
  });

  it('refuses when the stage session has closed (the stage ended or was retried)', async () => {
    expect(await setup({ session: undefined }).admission.admit(url())).toMatchObject({ status: 409, code: 'live_view_closed', message: expect.stringContaining('no open browser any more') });
  });

  it('refuses an interactive ticket once the gate is answered; a view-only one still watches', async () => {
    const answered = { stages: [{ id: 'login', gate: { message: 'Log in', answer: { decision: 'accept', at: '2030-01-01T00:00:00Z' } } }] } as unknown as Partial<RunView>;
    expect(await setup({ run: answered }).admission.admit(url())).toMatchObject({ status: 409, code: 'live_view_closed', message: expect.stringContaining('view-only') });
    expect(await setup({ run: answered, ticket: { ...record, mode: 'view-only' } }).admission.admit(url())).toMatchObject({ ok: true });
  });

  it('answers 503 when Redis cannot be reached', async () => {
    expect(await setup({ redisDown: true }).admission.admit(url())).toMatchObject({ status: 503, code: 'relay_unavailable' });
  });
});
