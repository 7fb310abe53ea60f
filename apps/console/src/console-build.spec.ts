import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The build the api serves: hashed assets and an index.html that loads only them. */
describe('the console build', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'sf-console-build-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('writes index.html with absolute, content-hashed asset URLs and no inline script or style', () => {
    execFileSync(process.execPath, [resolve(__dirname, '../build.cjs'), '--outdir', outdir], { stdio: 'pipe' });
    const assets = readdirSync(join(outdir, 'assets'));
    const script = assets.find((f) => /^main-[A-Z0-9]{8}\.js$/.test(f));
    const stylesheet = assets.find((f) => /^styles-[A-Z0-9]{8}\.css$/.test(f));
    expect(script).toBeDefined();
    expect(stylesheet).toBeDefined();
    const html = readFileSync(join(outdir, 'index.html'), 'utf8');
    expect(html).toContain(`<script type="module" src="/assets/${script}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/assets/${stylesheet}">`);
    expect(html).toMatch(/Content-Security-Policy" content="default-src 'self'; script-src 'self'; style-src 'self';/);
    // Only the one external module: no inline code for the CSP to allow.
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/<style|style="/);
    // The bundle carries no Node built-ins and no HTML-parsing sinks.
    const js = readFileSync(join(outdir, 'assets', script as string), 'utf8');
    expect(js).not.toMatch(/require\(["']node:|innerHTML|insertAdjacentHTML/);
  }, 60_000);
});
