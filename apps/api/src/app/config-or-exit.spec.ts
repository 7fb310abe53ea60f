import { loadApiConfig } from '@stageflow/config';
import { configOrExit } from './config-or-exit';

describe('configOrExit', () => {
  const exit = jest.fn((code: number): never => {
    throw new Error(`exit ${code}`);
  });

  beforeEach(() => exit.mockClear());

  it('returns the config when it is valid', () => {
    const write = jest.fn();
    expect(configOrExit(() => loadApiConfig({ STAGEFLOW_API_PORT: '3100' }), write, exit).port).toBe(3100);
    expect(write).not.toHaveBeenCalled();
  });

  it('prints what to do and exits 1 for a non-loopback bind without a token', () => {
    const write = jest.fn();
    expect(() => configOrExit(() => loadApiConfig({ STAGEFLOW_API_HOST: '0.0.0.0' }), write, exit)).toThrow('exit 1');
    expect(exit).toHaveBeenCalledWith(1);
    expect(write.mock.calls[0][0]).toMatch(/set STAGEFLOW_API_TOKEN/);
  });

  it('lets other errors through (they are bugs, with a stack)', () => {
    expect(() =>
      configOrExit(() => {
        throw new TypeError('boom');
      }, jest.fn(), exit),
    ).toThrow(TypeError);
    expect(exit).not.toHaveBeenCalled();
  });
});
