import { Writable } from 'node:stream';
import { createLogger } from './logger';

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
