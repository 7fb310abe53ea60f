import { LIVE_VIEW_TICKET_PATTERN, type LiveViewMode, type SessionRecord } from '@stageflow/contracts';
import type { TicketBinding } from '@stageflow/live-view';
import request from 'supertest';
import { GATE_THEN_COMMAND } from '../../test/pipeline-sources';
import { createTestApp, type TestApp } from '../../test/test-app';

/** The session registry as browser-host would have it: one open session per (run, stage) listed. */
class FakeDirectory {
  readonly open = new Map<string, SessionRecord>();
  async openSessionOf(runId: string, stageId: string): Promise<SessionRecord | undefined> {
    return this.open.get(`${runId}/${stageId}`);
  }
  add(runId: string, stageId: string, attempt = 1): SessionRecord {
    const record: SessionRecord = {
      sessionId: `sf-${runId}-${stageId}-${attempt}`,
      hostId: 'local',
      runId,
      stageId,
      attempt,
      kind: 'shared',
      browserId: 'sb-1',
      profile: 'work',
      targetId: 'T1',
      cdpEndpoint: 'ws://127.0.0.1:9/devtools/browser/x',
      socketDir: '/tmp/x',
      headedMode: 'headless',
      openedAt: new Date().toISOString(),
      blocked: [],
    };
    this.open.set(`${runId}/${stageId}`, record);
    return record;
  }
}

class FakeTickets {
  readonly issued: Array<{ binding: TicketBinding; mode: LiveViewMode; ticket: string }> = [];
  async issue(binding: TicketBinding, mode: LiveViewMode) {
    const ticket = `T${'k'.repeat(41)}${this.issued.length}`;
    this.issued.push({ binding, mode, ticket });
    return { ticket, record: { ...binding, mode, issuedAt: '2030-01-01T00:00:00.000Z', expiresAt: '2030-01-01T00:01:00.000Z' } };
  }
}

describe('POST /api/runs/:run/stages/:stage/live-view/tickets', () => {
  let t: TestApp;
  let http: ReturnType<typeof request>;
  let directory: FakeDirectory;
  let tickets: FakeTickets;
  let run: string;
  const path = (stage = 'approve') => `/api/runs/${run}/stages/${stage}/live-view/tickets`;

  beforeEach(async () => {
    directory = new FakeDirectory();
    tickets = new FakeTickets();
    t = await createTestApp({ liveView: { directory, tickets } });
    http = request(t.app.getHttpServer());
    run = (await http.post('/api/runs').send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id;
  });
  afterEach(() => t.app.close());

  it('issues an interactive ticket by default for the stage\'s open browser session, with the stable path', async () => {
    directory.add(run, 'approve');
    const res = await http.post(path()).expect(201);
    expect(res.body).toEqual({
      ticket: tickets.issued[0].ticket,
      mode: 'interactive',
      expiresAt: '2030-01-01T00:01:00.000Z',
      path: `/api/runs/${run}/stages/approve/live-view`,
    });
    expect(res.body.ticket).toMatch(LIVE_VIEW_TICKET_PATTERN);
    expect(tickets.issued[0].binding).toEqual({ runId: run, stageId: 'approve', attempt: 1, sessionId: `sf-${run}-approve-1` });
  });

  it('issues a view-only ticket on request', async () => {
    directory.add(run, 'approve');
    expect((await http.post(path()).send({ mode: 'view-only' }).expect(201)).body.mode).toBe('view-only');
    expect(tickets.issued[0].mode).toBe('view-only');
  });

  it('never writes the ticket to the log', async () => {
    directory.add(run, 'approve');
    const { ticket } = (await http.post(path()).expect(201)).body as { ticket: string };
    expect(JSON.stringify(t.logger.entries)).not.toContain(ticket);
  });

  it('refuses a bad mode or an unknown field, naming it', async () => {
    directory.add(run, 'approve');
    const bad = await http.post(path()).send({ mode: 'admin' }).expect(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('mode must be one of interactive, view-only') });
    expect((await http.post(path()).send({ mode: 'view-only', ticket: 'x' }).expect(400)).body.code).toBe('invalid_request');
    expect(tickets.issued).toEqual([]);
  });

  it('answers 404 for an unknown run or stage and 400 for a malformed id', async () => {
    expect((await http.post('/api/runs/nope/stages/approve/live-view/tickets').expect(404)).body.code).toBe('run_not_found');
    expect((await http.post(path('nope')).expect(404)).body.code).toBe('stage_not_found');
    expect((await http.post(`/api/runs/${run}/stages/bad%20id/live-view/tickets`).expect(400)).body.code).toBe('invalid_id');
  });

  it('answers 409 live_view_unavailable when the stage has no open browser, and says why', async () => {
    const res = await http.post(path('ship')).expect(409);
    expect(res.body.code).toBe('live_view_unavailable');
    expect(res.body.message).toContain('has no open browser right now');
  });

  it('closes the interactive view once the gate is answered; view-only still works', async () => {
    directory.add(run, 'approve');
    await http.post(`/api/runs/${run}/stages/approve/gate`).send({ decision: 'accept' }).expect(200);
    const res = await http.post(path()).expect(409);
    expect(res.body).toMatchObject({ code: 'live_view_closed', message: expect.stringContaining('{"mode":"view-only"}') });
    await http.post(path()).send({ mode: 'view-only' }).expect(201);
  });

  it('answers 409 run_finished once the run has ended', async () => {
    directory.add(run, 'approve');
    await http.post(`/api/runs/${run}/cancel`).expect(200);
    expect((await http.post(path()).expect(409)).body.code).toBe('run_finished');
  });
});

describe('live-view tickets with a token configured', () => {
  it('need the token like every route', async () => {
    const directory = new FakeDirectory();
    const t = await createTestApp({ token: 'a-long-enough-token-1234', liveView: { directory, tickets: new FakeTickets() } });
    try {
      const http = request(t.app.getHttpServer());
      const auth = { Authorization: 'Bearer a-long-enough-token-1234' };
      const run = (await http.post('/api/runs').set(auth).send({ yaml: GATE_THEN_COMMAND }).expect(201)).body.id as string;
      directory.add(run, 'approve');
      expect((await http.post(`/api/runs/${run}/stages/approve/live-view/tickets`).expect(401)).body.code).toBe('unauthorized');
      await http.post(`/api/runs/${run}/stages/approve/live-view/tickets`).set(auth).expect(201);
    } finally {
      await t.app.close();
    }
  });
});
