/**
 * Memory: 8 parallel stage sessions in one shared browser (browser-host's path: 8
 * `POST /internal/sessions` for one run and profile, each tab navigated to a simple
 * page on 127.0.0.1) against 8 separate raw headless browsers with one tab each on
 * the same page (same switches, fresh `--user-data-dir` each).
 *
 *   SWC_NODE_PROJECT=tsconfig.base.json node -r @swc-node/register bench/run.ts memory
 *
 * Each setup's total is the sum of `VmRSS` (/proc/<pid>/status) over the browser
 * process and all its descendants (found by walking /proc parent pids). RSS counts
 * pages shared between processes once per process, so the sum overstates what the
 * machine really spends; `Pss` (/proc/<pid>/smaps_rollup) splits shared pages and is
 * printed alongside. Sampled after the pages loaded and a 2 s settle, 3 times, median.
 * JSON: bench/results/memory-<timestamp>.json.
 */
import { CdpConnection } from '@stageflow/cdp';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  acquireLease,
  chromiumPidsOf,
  closeRaw,
  endBenchRun,
  launchRaw,
  openSession,
  startBenchHost,
  startBenchRun,
  writeResult,
  type RawBrowser,
} from './browser.bench';

const TABS = Number(process.env['STAGEFLOW_BENCH_MEMORY_TABS'] ?? 8);
const SETTLE_MS = 2000;
const SAMPLES = 3;

interface Mem {
  rssKb: number;
  pssKb: number;
  processes: number;
}

/** pid → parent pid, for every process. */
async function parents(): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'latin1').catch(() => '');
    if (!stat) continue;
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    map.set(Number(entry), Number(rest[1]));
  }
  return map;
}

/** The roots and all their descendants. */
export async function processTree(roots: number[]): Promise<number[]> {
  const ppid = await parents();
  const children = new Map<number, number[]>();
  for (const [pid, parent] of ppid) children.set(parent, [...(children.get(parent) ?? []), pid]);
  const seen = new Set<number>();
  const stack = roots.filter((p) => ppid.has(p));
  while (stack.length) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return [...seen];
}

const kbField = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

export async function memoryOf(roots: number[]): Promise<Mem> {
  let rssKb = 0;
  let pssKb = 0;
  const pids = await processTree(roots);
  for (const pid of pids) {
    rssKb += kbField(await readFile(`/proc/${pid}/status`, 'latin1').catch(() => ''), 'VmRSS');
    pssKb += kbField(await readFile(`/proc/${pid}/smaps_rollup`, 'latin1').catch(() => ''), 'Pss');
  }
  return { rssKb, pssKb, processes: pids.length };
}

async function settledMemory(roots: number[]): Promise<Mem> {
  const samples: Mem[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    await new Promise((resolve) => setTimeout(resolve, i === 0 ? SETTLE_MS : 500));
    samples.push(await memoryOf(roots));
  }
  const median = (k: keyof Mem) => [...samples].map((s) => s[k]).sort((a, b) => a - b)[Math.floor(SAMPLES / 2)];
  return { rssKb: median('rssKb'), pssKb: median('pssKb'), processes: median('processes') };
}

/** A simple page on 127.0.0.1. */
async function startPage(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>stage</title><h1>Stage page</h1><p>Some text.</p><script>document.body.append(String(Date.now()))</script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/** Navigates a tab and waits for its load event. */
async function navigate(cdp: CdpConnection, targetId: string, url: string): Promise<void> {
  const sessionId = await cdp.attachToTab(targetId);
  await cdp.send('Page.enable', {}, { sessionId });
  const loaded = cdp.waitForEvent('Page.loadEventFired', { sessionId, timeoutMs: 30_000 });
  loaded.catch(() => undefined);
  await cdp.send('Page.navigate', { url }, { sessionId });
  await loaded;
}

export interface MemoryBenchResult {
  benchmark: 'memory';
  date: string;
  node: string;
  tabs: number;
  sharedBrowser: Mem;
  separateBrowsers: Mem;
  ratioRss: number;
  ratioPss: number;
}

export async function runMemoryBench(redisUrl: string): Promise<MemoryBenchResult> {
  const page = await startPage();
  const h = await startBenchHost(redisUrl);
  let shared: Mem;
  let separate: Mem;
  try {
    // Stageflow: one run, one profile, TABS parallel stage sessions.
    const profile = 'bench-memory';
    const stageIds = Array.from({ length: TABS }, (_, i) => `m${i}`);
    const runId = await startBenchRun(h, 'bench-memory', stageIds);
    const leaseToken = await acquireLease(h, profile, runId);
    const sessions = await Promise.all(
      stageIds.map((stageId) => openSession(h, { runId, stageId, attempt: 1, profile, leaseToken, headed: false, allowDomains: [] })),
    );
    const cdp = await CdpConnection.connect(sessions[0].cdpEndpoint, { callTimeoutMs: 30_000 });
    await Promise.all(sessions.map((s) => navigate(cdp, s.targetId, page.url)));
    await cdp.close();
    const pids = await chromiumPidsOf(h.dirs.hostId);
    if (pids.length !== 1) throw new Error(`expected one shared browser, found ${pids.length}`);
    shared = await settledMemory(pids);
    await endBenchRun(h, runId);

    // Raw: TABS browsers, one tab each (the page is the browser's first and only tab).
    const browsers: RawBrowser[] = [];
    try {
      for (let i = 0; i < TABS; i++) browsers.push(await launchRaw('about:blank'));
      await Promise.all(
        browsers.map(async (b) => {
          const c = await CdpConnection.connect(b.wsEndpoint, { callTimeoutMs: 30_000 });
          try {
            const [first] = await c.listPages();
            await navigate(c, first.targetId, page.url);
          } finally {
            await c.close();
          }
        }),
      );
      separate = await settledMemory(browsers.map((b) => b.pid));
    } finally {
      await Promise.all(browsers.map((b) => closeRaw(b)));
    }
  } finally {
    await h.close();
    await new Promise((resolve) => page.server.close(resolve));
  }
  const r2 = (n: number) => Math.round(n * 100) / 100;
  const result: MemoryBenchResult = {
    benchmark: 'memory',
    date: new Date().toISOString(),
    node: process.version,
    tabs: TABS,
    sharedBrowser: shared,
    separateBrowsers: separate,
    ratioRss: r2(shared.rssKb / separate.rssKb),
    ratioPss: r2(shared.pssKb / separate.pssKb),
  };
  const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
  const row = (label: string, m: Mem) => `${label.padEnd(44)}${mb(m.rssKb).padStart(12)}${mb(m.pssKb).padStart(12)}${String(m.processes).padStart(8)}`;
  console.log(
    [
      `memory bench: ${TABS} stage tabs on a local page`,
      `${''.padEnd(44)}${'sum VmRSS'.padStart(12)}${'sum Pss'.padStart(12)}${'procs'.padStart(8)}`,
      row(`stageflow: 1 shared browser, ${TABS} sessions`, shared),
      row(`raw: ${TABS} browsers x 1 tab`, separate),
      `ratio shared/separate: RSS ${result.ratioRss}x, PSS ${result.ratioPss}x`,
    ].join('\n'),
  );
  console.log(`wrote ${await writeResult('memory', result)}`);
  return result;
}
