import { STAGE_STATES, TERMINAL_STAGE_STATES } from '@stageflow/contracts';
import { endsSession } from './stage-ends';

const session = { stageId: 'work', attempt: 2 };

describe('which stage changes end a session', () => {
  it.each(TERMINAL_STAGE_STATES)('the attempt ending %s ends it', (state) => {
    expect(endsSession(session, { stageId: 'work', state, attempt: 2 })).toBe(true);
  });

  it.each(STAGE_STATES.filter((s) => !TERMINAL_STAGE_STATES.includes(s)))('the same attempt being %s does not', (state) => {
    expect(endsSession(session, { stageId: 'work', state, attempt: 2 })).toBe(false);
  });

  it('a newer attempt (a retry after a lost runner) ends it, whatever its state', () => {
    expect(endsSession(session, { stageId: 'work', state: 'queued', attempt: 3 })).toBe(true);
  });

  it('an older attempt or another stage does not', () => {
    expect(endsSession(session, { stageId: 'work', state: 'failed', attempt: 1 })).toBe(false);
    expect(endsSession(session, { stageId: 'other', state: 'success', attempt: 2 })).toBe(false);
  });
});
