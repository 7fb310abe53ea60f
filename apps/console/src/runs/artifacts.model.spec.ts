import { parseArtifactList } from './artifacts.model';

describe('the artifacts list', () => {
  it('reads an array or {items}, keeps well-formed entries, sorted by stage, attempt and name', () => {
    const entries = [
      { runId: 'r', stageId: 'shot', attempt: 1, name: 'b.png', sizeBytes: 10, contentType: 'image/png', modifiedAt: 't' },
      { runId: 'r', stageId: 'build', attempt: 2, name: 'app.tgz' },
      { runId: 'r', stageId: 'build', attempt: 1, name: 'app.tgz', sizeBytes: 'big' },
      { stageId: 'x', attempt: 0, name: 'bad attempt' },
      'junk',
    ];
    const expected = [
      { stageId: 'build', attempt: 1, name: 'app.tgz' },
      { stageId: 'build', attempt: 2, name: 'app.tgz' },
      { stageId: 'shot', attempt: 1, name: 'b.png', sizeBytes: 10, contentType: 'image/png', modifiedAt: 't' },
    ];
    expect(parseArtifactList(entries)).toEqual(expected);
    expect(parseArtifactList({ items: entries })).toEqual(expected);
    expect(parseArtifactList({ items: [] })).toEqual([]);
    expect(parseArtifactList({ nope: 1 })).toBeUndefined();
  });
});
