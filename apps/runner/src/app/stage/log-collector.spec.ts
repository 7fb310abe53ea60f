import { LogCollector } from './log-collector';

describe('LogCollector', () => {
  it('splits chunks into lines per stream, across chunk boundaries and multi-byte characters', () => {
    const logs = new LogCollector();
    const euro = Buffer.from('€');
    logs.push('stdout', Buffer.concat([Buffer.from('hel'), euro.subarray(0, 1)]));
    logs.push('stderr', Buffer.from('warn\r\n'));
    logs.push('stdout', Buffer.concat([euro.subarray(1), Buffer.from('lo\nlast')]));
    logs.end();
    expect(logs.drain()).toEqual([
      { stream: 'stderr', line: 'warn' },
      { stream: 'stdout', line: 'hel€lo' },
      { stream: 'stdout', line: 'last' },
    ]);
    expect(logs.drain()).toEqual([]);
  });

  it('caps a line, dropping the rest of it without holding it in memory', () => {
    const logs = new LogCollector({ maxLineChars: 8, maxEvents: 10, tailLines: 5 });
    logs.push('stdout', 'abcdefghij'.repeat(1000));
    logs.push('stdout', 'klm\nnext\n');
    expect(logs.drain()).toEqual([
      { stream: 'stdout', line: 'abcdefgh… [line truncated]' },
      { stream: 'stdout', line: 'next' },
    ]);
  });

  it('stops streaming after maxEvents with one notice, while the tail keeps the last lines', () => {
    const logs = new LogCollector({ maxLineChars: 100, maxEvents: 3, tailLines: 2 });
    logs.push('stdout', ['1', '2', '3', '4', '5', '6'].join('\n') + '\n');
    const lines = logs.drain();
    expect(lines.map((l) => l.line)).toEqual([
      '1',
      '2',
      '3',
      "[stageflow] log truncated: more than 3 lines; further output is not streamed (the stage's log tail keeps the last 2)",
    ]);
    expect(logs.tail()).toEqual(['5', '6']);
    logs.push('stderr', 'later\n');
    expect(logs.drain()).toEqual([]);
    expect(logs.tail()).toEqual(['6', 'later']);
  });
});
