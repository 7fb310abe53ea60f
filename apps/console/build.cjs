// Builds the console: one ES module bundle and one stylesheet with content
// hashes in their names under dist/apps/console/assets/, and an index.html
// that loads them. The api serves this folder (STAGEFLOW_CONSOLE_DIR).
//
//   node apps/console/build.cjs [--outdir <dir>] [--development]
//
// esbuild instead of the workspace's webpack: the console is a small browser
// bundle with no loaders to configure, and esbuild builds it in well under a
// second on a 2-core machine.
'use strict';

const esbuild = require('esbuild');
const { mkdir, readFile, rm, writeFile } = require('node:fs/promises');
const { join, relative, resolve } = require('node:path');

const WORKSPACE = resolve(__dirname, '../..');
const SRC = join(__dirname, 'src');

/**
 * @param {{ outdir?: string, production?: boolean }} [options]
 * @returns {Promise<{ outdir: string, script: string, stylesheet: string }>} paths of the assets, as index.html names them
 */
async function buildConsole(options = {}) {
  const outdir = resolve(options.outdir ?? join(WORKSPACE, 'dist/apps/console'));
  const production = options.production ?? true;
  await rm(outdir, { recursive: true, force: true });
  await mkdir(join(outdir, 'assets'), { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: WORKSPACE,
    entryPoints: { main: join(SRC, 'main.ts'), styles: join(SRC, 'styles.css') },
    outdir: join(outdir, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'edge111', 'firefox114', 'safari16.4'],
    tsconfig: join(__dirname, 'tsconfig.app.json'),
    minify: production,
    sourcemap: 'linked',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': JSON.stringify(production ? 'production' : 'development') },
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entryOutput = (entry) => {
    const found = outputs.find(([, meta]) => meta.entryPoint && resolve(WORKSPACE, meta.entryPoint) === join(SRC, entry));
    if (!found) throw new Error(`esbuild produced no output for ${entry}`);
    // Absolute URLs: index.html also answers client routes such as /runs/abc.
    return '/' + relative(outdir, resolve(WORKSPACE, found[0])).split('\\').join('/');
  };
  const script = entryOutput('main.ts');
  const stylesheet = entryOutput('styles.css');
  const template = await readFile(join(SRC, 'index.html'), 'utf8');
  const html = fill(fill(template, 'styles', `<link rel="stylesheet" href="${stylesheet}">`), 'scripts', `<script type="module" src="${script}"></script>`);
  await writeFile(join(outdir, 'index.html'), html);
  return { outdir, script, stylesheet };
}

function fill(template, slot, markup) {
  const marker = `<!-- stageflow:${slot} -->`;
  if (!template.includes(marker)) throw new Error(`src/index.html has no ${marker}`);
  return template.replace(marker, markup);
}

module.exports = { buildConsole };

if (require.main === module) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  buildConsole({ outdir: at >= 0 ? args[at + 1] : undefined, production: !args.includes('--development') })
    .then(({ outdir, script, stylesheet }) => console.log(`console built in ${relative(process.cwd(), outdir) || '.'}: ${script}, ${stylesheet}`))
    .catch((error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
}
