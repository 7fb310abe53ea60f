import { spawn } from 'node:child_process';
import { isPidAlive, parseEnviron, parseStatState, splitNul } from './process-table';
import { findFreeDisplay } from './virtual-display';

describe('process table', () => {
  it('splits NUL-separated cmdline and environ', () => {
    expect(splitNul('/usr/lib/chromium/chromium\0--a=1\0about:blank\0')).toEqual(['/usr/lib/chromium/chromium', '--a=1', 'about:blank']);
    expect(parseEnviron('A=1\0STAGEFLOW_HOST=local\0B=x=y\0')).toEqual({ A: '1', STAGEFLOW_HOST: 'local', B: 'x=y' });
  });

  it('reads the state after the last paren of /proc/<pid>/stat', () => {
    expect(parseStatState('42 (weird) name) Z 1 42 42')).toBe('Z');
    expect(parseStatState('42 (chromium) S 1')).toBe('S');
  });

  it('knows a live pid from a gone one', async () => {
    expect(isPidAlive(process.pid)).toBe(true);
    const child = spawn('true');
    const pid = child.pid as number;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(isPidAlive(pid)).toBe(false);
    expect(isPidAlive(-1)).toBe(false);
  });
});

describe('findFreeDisplay', () => {
  it('skips numbers with a lock file or a socket', async () => {
    const taken = new Set(['/tmp/.X100-lock', '/tmp/.X11-unix/X101']);
    await expect(findFreeDisplay(100, async (p) => taken.has(p))).resolves.toBe(102);
  });
});
