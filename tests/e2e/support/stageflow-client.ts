/**
 * A small client for the api as a user's script would use it: REST with the
 * bearer token, and the run-event WebSocket at /api/ws.
 */
import type { RunEvent, RunState, StageState } from '@stageflow/contracts';
import { TERMINAL_RUN_STATES } from '@stageflow/contracts';
import WebSocket from 'ws';
import { fetchWithin } from './compose-stack';

export interface StageView {
  id: string;
  state: StageState;
  reason?: string;
  envelope?: { ok: boolean; output: unknown };
  gate?: { message: string; answer?: { decision: string } };
}

export interface RunView {
  id: string;
  state: RunState;
  reason?: string;
  stages: StageView[];
}

export interface ApiResponse<T> {
  status: number;
  body: T;
}

export function stackUrl(): string {
  const url = process.env['STAGEFLOW_E2E_URL'];
  if (!url) throw new Error('STAGEFLOW_E2E_URL is not set: run e2e tests with `npm run test:e2e`');
  return url;
}

export function stackToken(): string | undefined {
  return process.env['STAGEFLOW_E2E_TOKEN'] || undefined;
}

/** `token`: omitted = the stack's token, `null` = send none, a string = send that one. */
export async function api<T = unknown>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  token?: string | null,
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {};
  const bearer = token === undefined ? stackToken() : token;
  if (bearer) headers['authorization'] = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetchWithin(`${stackUrl()}${path}`, 15_000, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text so a failing assertion shows it
  }
  return { status: res.status, body: parsed as T };
}

/** GET `path` until `done` holds for the answer, or fail with the last answer after `timeoutMs`. */
export async function pollUntil<T>(path: string, done: (body: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: ApiResponse<T> | undefined;
  while (Date.now() < deadline) {
    last = await api<T>('GET', path);
    if (last.status === 200 && done(last.body)) return last.body;
    await sleep(250);
  }
  throw new Error(`GET ${path} did not reach the expected state within ${timeoutMs} ms; last answer: ${JSON.stringify(last)}`);
}

/** Every event of a run through the REST history, oldest first. */
export async function runHistory(runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await api<{ items: RunEvent[]; last: number }>('GET', `/api/runs/${runId}/events?after=${after}&limit=1000`);
    if (page.status !== 200) throw new Error(`GET events answered ${page.status}: ${JSON.stringify(page.body)}`);
    events.push(...page.body.items);
    if (page.body.items.length === 0) return events;
    after = page.body.last;
  }
}

export function isRunEnd(event: RunEvent): boolean {
  return event.type === 'run.state' && TERMINAL_RUN_STATES.includes((event.data as { state: RunState }).state);
}

export function stageReached(stageId: string, state: StageState): (event: RunEvent) => boolean {
  return (e) => e.type === 'stage.state' && e.stageId === stageId && (e.data as { state: StageState }).state === state;
}

/**
 * One WebSocket subscribed to one run. Collects the run's events in arrival
 * order, and the protocol errors the server sends, for the test to inspect.
 */
export class RunEventSocket {
  readonly events: RunEvent[] = [];
  readonly errors: unknown[] = [];
  private waiters: { match: (e: RunEvent) => boolean; resolve: (e: RunEvent) => void }[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data) => this.receive(data.toString()));
  }

  /** Opens `/api/ws` (token as `?token=`, the way a browser must send it) and subscribes to `runId` after `after`. */
  static async open(runId: string, after: number): Promise<RunEventSocket> {
    const url = new URL('/api/ws', stackUrl().replace(/^http/, 'ws'));
    const token = stackToken();
    if (token) url.searchParams.set('token', token);
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`WebSocket upgrade refused: HTTP ${res.statusCode}`)));
    });
    const client = new RunEventSocket(socket);
    socket.send(JSON.stringify({ type: 'subscribe', run: runId, after }));
    return client;
  }

  /** Resolves with the first event (already received or still to come) that matches. */
  waitFor(match: (e: RunEvent) => boolean, what: string, timeoutMs = 60_000): Promise<RunEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        const got = this.events.map((e) => `${e.seq}:${e.type}${e.stageId ? `(${e.stageId})` : ''}`).join(' ');
        reject(new Error(`no ${what} within ${timeoutMs} ms over the WebSocket; received: ${got || 'nothing'}; errors: ${JSON.stringify(this.errors)}`));
      }, timeoutMs);
      const done = (e: RunEvent) => {
        clearTimeout(timer);
        resolve(e);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }

  private receive(raw: string): void {
    const msg = JSON.parse(raw) as { type: string; event?: RunEvent };
    if (msg.type === 'error') this.errors.push(msg);
    if (msg.type !== 'event' || !msg.event) return;
    this.events.push(msg.event);
    for (const w of this.waiters.filter((x) => x.match(msg.event as RunEvent))) {
      this.waiters = this.waiters.filter((x) => x !== w);
      w.resolve(msg.event);
    }
  }
}

export function seqs(events: RunEvent[]): number[] {
  return events.map((e) => e.seq);
}

/** 1..n */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
