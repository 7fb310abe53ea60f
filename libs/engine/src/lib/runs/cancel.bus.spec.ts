import { parseRunId } from './cancel.bus';

describe('cancel messages', () => {
  it('accepts a run id and refuses anything else', () => {
    expect(parseRunId('{"runId":"mx2a-01ab"}')).toBe('mx2a-01ab');
    expect(parseRunId('{"runId":"../etc"}')).toBeUndefined();
    expect(parseRunId('{"runId":7}')).toBeUndefined();
    expect(parseRunId('not json')).toBeUndefined();
    expect(parseRunId('null')).toBeUndefined();
  });
});
