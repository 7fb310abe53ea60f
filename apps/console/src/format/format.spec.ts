import { durationBetween, formatBytes, formatDuration, prettyJson } from './format';

describe('formatting', () => {
  it('durations stay short', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_400)).toBe('12 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(2 * 3600_000 + 3 * 60_000)).toBe('2 h 03 min');
    expect(formatDuration(-1)).toBe('');
    expect(durationBetween('2030-01-01T00:00:00Z', undefined, Date.parse('2030-01-01T00:00:09Z'))).toBe('9 s');
    expect(durationBetween('2030-01-01T00:00:00Z', '2030-01-01T00:01:00Z', 0)).toBe('1 min 00 s');
  });

  it('bytes and JSON', () => {
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(4300)).toBe('4.2 KiB');
    expect(prettyJson({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyJson('<b>x</b>')).toBe('"<b>x</b>"');
  });
});
