import { Writable } from 'node:stream';
import { createLogger, redactUrl } from './logger';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l)) };
}

describe('createLogger', () => {
  it('writes JSON with the service name and blanks secrets', () => {
    const out = capture();
    const log = createLogger('runner', 'info', out.stream);
    log.info({ runId: 'r1', auth: { token: 'abc123' }, req: { headers: { authorization: 'Bearer s3cret' } } }, 'hello');
    const [line] = out.lines();
    expect(line).toMatchObject({ service: 'runner', level: 'info', runId: 'r1', msg: 'hello' });
    expect(JSON.stringify(line)).not.toContain('abc123');
    expect(JSON.stringify(line)).not.toContain('s3cret');
  });
});

describe('redactUrl', () => {
  it('blanks ticket and token query values and keeps the rest', () => {
    expect(redactUrl('/api/runs/r1/stages/login/live-view?ticket=abcDEF_-123&x=1')).toBe('/api/runs/r1/stages/login/live-view?ticket=[redacted]&x=1');
    expect(redactUrl('/api/ws?Token=s3cret')).toBe('/api/ws?Token=[redacted]');
    expect(redactUrl('/api/ws?tick%65t=s3cret')).toBe('/api/ws?tick%65t=[redacted]');
    expect(redactUrl('/api/runs')).toBe('/api/runs');
  });

  it('blanks a ticket however a log line carries it', () => {
    const out = capture();
    const log = createLogger('api', 'info', out.stream);
    log.info({ req: { url: '/x', query: { ticket: 'T1cket' } }, ticket: 'T2cket', view: { ticket: 'T3cket' } }, 'upgrade');
    expect(JSON.stringify(out.lines())).not.toMatch(/T\dcket/);
  });
});
