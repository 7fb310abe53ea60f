import { CdpError } from './cdp.error';
import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  it('passes through a value that arrives in time', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000, 'x')).resolves.toBe(7);
  });

  it('passes through a rejection unchanged', async () => {
    const boom = new Error('boom');
    await expect(withTimeout(Promise.reject(boom), 1000, 'x')).rejects.toBe(boom);
  });

  it('rejects with cdp_timeout naming the call, and runs onTimeout once', async () => {
    const onTimeout = jest.fn();
    const never = new Promise<never>(() => undefined);
    const error = await withTimeout(never, 20, 'Page.navigate', onTimeout).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CdpError);
    expect(error).toMatchObject({ code: 'cdp_timeout', status: 504 });
    expect((error as Error).message).toContain('Page.navigate');
    expect(onTimeout).toHaveBeenCalledTimes(1);
  });

  it('refuses a non-positive bound instead of waiting forever', async () => {
    await expect(withTimeout(Promise.resolve(1), 0, 'x')).rejects.toBeInstanceOf(RangeError);
  });
});
