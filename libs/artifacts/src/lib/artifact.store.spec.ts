import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StageflowError } from '@stageflow/contracts';
import {
  ArtifactFolderUnsafeError,
  ArtifactNameError,
  ArtifactNotFoundError,
  ArtifactOwnerError,
  ArtifactStore,
  ArtifactTooLargeError,
  contentTypeOf,
} from '../index';

const owner = { runId: 'run-1', stageId: 'look', attempt: 1 };
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

describe('ArtifactStore', () => {
  let base: string;
  let root: string;
  let store: ArtifactStore;

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'sf-artifacts-'));
    root = join(base, 'artifacts');
    store = new ArtifactStore({ root, maxBytes: 1024 });
  });

  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('writes <root>/<run>/<stage>/<attempt>/<name> with owner-only folders and file, and reads it back', async () => {
    const info = await store.write(owner, 'shot.png', PNG);
    expect(info).toEqual({
      ...owner,
      name: 'shot.png',
      sizeBytes: PNG.length,
      contentType: 'image/png',
      modifiedAt: expect.any(String),
    });
    const file = join(root, 'run-1', 'look', '1', 'shot.png');
    expect(readFileSync(file)).toEqual(PNG);
    for (const dir of [join(root, 'run-1'), join(root, 'run-1', 'look'), join(root, 'run-1', 'look', '1')]) {
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No temp file is left beside it.
    expect(readdirSync(join(root, 'run-1', 'look', '1'))).toEqual(['shot.png']);

    const opened = await store.open(owner, 'shot.png');
    expect(opened.info).toEqual(info);
    expect(await readAll(opened.stream)).toEqual(PNG);
  });

  it('replaces an artifact written again under the same name, whole', async () => {
    await store.write(owner, 'a.txt', Buffer.from('first'));
    await store.write(owner, 'a.txt', Buffer.from('second'));
    expect(await readAll((await store.open(owner, 'a.txt')).stream)).toEqual(Buffer.from('second'));
    expect(readdirSync(join(root, 'run-1', 'look', '1'))).toEqual(['a.txt']);
  });

  it('refuses an artifact over the cap and writes nothing', async () => {
    const error = await store.write(owner, 'big.png', Buffer.alloc(1025)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArtifactTooLargeError);
    expect(error).toMatchObject({ code: 'artifact_too_large', status: 413 });
    expect((error as Error).message).toContain('1025 bytes; the limit is 1024');
    expect((error as Error).message).toContain('STAGEFLOW_ARTIFACT_MAX_BYTES');
    await expect(store.list('run-1')).resolves.toEqual([]);
  });

  it.each(['../escape.png', '..', 'a/b.png', '/etc/passwd', '.hidden', '', 'a\u0000.png', 'x'.repeat(129)])(
    'refuses the name %j without touching the disk (write and open)',
    async (name) => {
      await expect(store.write(owner, name, PNG)).rejects.toBeInstanceOf(ArtifactNameError);
      await expect(store.open(owner, name)).rejects.toMatchObject({ code: 'artifact_name_invalid', status: 400 });
      expect(() => readdirSync(root)).toThrow();
    },
  );

  it.each([
    [{ ...owner, runId: '../other' }, 'run id'],
    [{ ...owner, runId: '' }, 'run id'],
    [{ ...owner, stageId: 'a/b' }, 'stage id'],
    [{ ...owner, stageId: '..' }, 'stage id'],
    [{ ...owner, attempt: 0 }, 'attempt'],
    [{ ...owner, attempt: 1.5 }, 'attempt'],
    [{ ...owner, attempt: Number.NaN }, 'attempt'],
  ])('refuses the owner %j (%s)', async (bad, what) => {
    const error = await store.write(bad, 'a.png', PNG).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArtifactOwnerError);
    expect((error as Error).message).toContain(what);
    await expect(store.open(bad, 'a.png')).rejects.toBeInstanceOf(ArtifactOwnerError);
    expect(() => store.attemptDir(bad)).toThrow(ArtifactOwnerError);
  });

  it('lists a run by stage, attempt and name, skipping what is not an artifact', async () => {
    await store.write({ ...owner, stageId: 'b', attempt: 10 }, 'z.json', Buffer.from('{}'));
    await store.write({ ...owner, stageId: 'b', attempt: 2 }, 'a.txt', Buffer.from('x'));
    await store.write(owner, 'shot.png', PNG);
    const dir = store.attemptDir(owner);
    writeFileSync(join(dir, '.in-progress.tmp'), 'x');
    mkdirSync(join(dir, 'nested'));
    symlinkSync('/etc/passwd', join(dir, 'passwd'));
    mkdirSync(join(root, 'run-1', 'not an id'));
    mkdirSync(join(root, 'run-1', 'look', '01'));
    writeFileSync(join(root, 'run-1', 'look', '01', 'x.png'), PNG);

    const listed = await store.list('run-1');
    expect(listed.map((a) => `${a.stageId}/${a.attempt}/${a.name}`)).toEqual(['b/2/a.txt', 'b/10/z.json', 'look/1/shot.png']);
    expect(listed[1]).toMatchObject({ contentType: 'application/json', sizeBytes: 2 });
    expect(JSON.stringify(listed)).not.toContain(base);
  });

  it('lists nothing for a run without artifacts', async () => {
    await expect(store.list('never-ran')).resolves.toEqual([]);
    await expect(store.list('../x')).rejects.toBeInstanceOf(ArtifactOwnerError);
  });

  it('never serves a link, a folder or a missing file, and says so without a path', async () => {
    const dir = store.attemptDir(owner);
    const secret = join(base, 'secret.txt');
    writeFileSync(secret, 'do not serve');
    symlinkSync(secret, join(dir, 'link.txt'));
    mkdirSync(join(dir, 'folder.png'));
    for (const name of ['link.txt', 'folder.png', 'missing.png']) {
      const error = await store.open(owner, name).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArtifactNotFoundError);
      expect(error).toMatchObject({ code: 'artifact_not_found', status: 404 });
      expect((error as Error).message).not.toContain(base);
    }
  });

  it('never reads or writes through a linked run, stage or attempt folder', async () => {
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(join(elsewhere, 'look', '1'), { recursive: true });
    writeFileSync(join(elsewhere, 'look', '1', 'shot.png'), PNG);
    mkdirSync(root, { recursive: true });
    symlinkSync(elsewhere, join(root, 'run-1'));

    await expect(store.open(owner, 'shot.png')).rejects.toBeInstanceOf(ArtifactNotFoundError);
    await expect(store.list('run-1')).resolves.toEqual([]);
    await expect(store.write(owner, 'new.png', PNG)).rejects.toBeInstanceOf(ArtifactFolderUnsafeError);
    expect(readdirSync(join(elsewhere, 'look', '1'))).toEqual(['shot.png']);
  });

  it('collects what a run stage left: artifacts, and removes what is not one, saying why', async () => {
    const dir = store.attemptDir(owner);
    const target = join(base, 'target.txt');
    writeFileSync(target, 'kept');
    writeFileSync(join(dir, 'report.json'), '{"ok":true}');
    writeFileSync(join(dir, 'has space.txt'), 'x');
    writeFileSync(join(dir, 'huge.bin'), Buffer.alloc(1025));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'inner.txt'), 'x');
    symlinkSync(target, join(dir, 'host'));

    const { artifacts, rejected } = await store.collect(owner);
    expect(artifacts.map((a) => a.name)).toEqual(['report.json']);
    expect(rejected).toEqual([
      { name: 'has space.txt', problem: expect.stringContaining('not an artifact name') },
      { name: 'host', problem: expect.stringContaining('symbolic link') },
      { name: 'huge.bin', problem: 'it is 1025 bytes, over the limit of 1024 bytes per artifact' },
      { name: 'sub', problem: expect.stringContaining('folder') },
    ]);
    // The folder now holds exactly the artifacts; a link's target is left alone.
    expect(readdirSync(dir)).toEqual(['report.json']);
    expect(readFileSync(target, 'utf8')).toBe('kept');
    await expect(store.list('run-1')).resolves.toEqual(artifacts);
  });

  it('collects nothing from an attempt that left no folder', async () => {
    await expect(store.collect(owner)).resolves.toEqual({ artifacts: [], rejected: [] });
  });

  it('throws typed errors with a stable code', async () => {
    const error = await store.open(owner, 'x.png').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StageflowError);
  });
});

describe('contentTypeOf', () => {
  it.each([
    ['a.png', 'image/png'],
    ['a.PNG', 'image/png'],
    ['a.tar.gz', 'application/gzip'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['page.html', 'application/octet-stream'],
    ['icon.svg', 'application/octet-stream'],
    ['script.js', 'application/octet-stream'],
    ['README', 'application/octet-stream'],
    ['a.constructor', 'application/octet-stream'],
  ])('%s → %s', (name, type) => {
    expect(contentTypeOf(name)).toBe(type);
  });
});
