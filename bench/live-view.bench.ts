/**
 * Live view: what a console viewer gets through the api's WebSocket proxy and
 * live-view-relay, against raw CDP on a tab of the same browser, interleaved round by
 * round (same machine load for both).
 *
 *   SWC_NODE_PROJECT=tsconfig.base.json node -r @swc-node/register bench/run.ts live-view
 *
 * browser-host, live-view-relay and the api run as their own processes (the live view
 * int-spec's harness: one Stageflow home, host id and key prefix), so the relay's CPU
 * is read from /proc/<relay pid>/stat. One run holds two stage sessions (tabs of the
 * run's headless browser) on pages of a site on 127.0.0.1; the raw baseline opens its
 * own two tabs on the same pages in the same browser (`Target.createTarget`, as
 * browser-host does) over one direct CDP connection.
 *
 * 1. Input to changed frame: a typed key (`key` message; raw: the same
 *    `Input.dispatchKeyEvent`s) until the first frame that differs from the last one
 *    before it. The page repaints only when typed into (caret hidden): each character
 *    recolours the whole page behind the input.
 * 2. Frames a second on a requestAnimationFrame animation: 1 and 2 viewers that read
 *    at once vs the raw screencast acked at once; the relay's and the api's CPU.
 * 3. Two viewers, one stops reading (its socket paused): the other's frame rate vs
 *    its rate alone, on the page with full-page noise (large frames); the relay's CPU
 *    for those frames too.
 *
 * Headless Chromium paints only the front tab of each window, and browser-host's spare
 * tab hides a stage's: the bench reports that, then brings the measured tab to the front.
 *
 * Env: STAGEFLOW_BENCH_LIVE_VIEW_N (40 keys each), STAGEFLOW_BENCH_LIVE_VIEW_ROUNDS (4),
 * STAGEFLOW_BENCH_LIVE_VIEW_WINDOW_MS (3000), STAGEFLOW_BENCH_LIVE_VIEW_STALL_MS (4000),
 * STAGEFLOW_BENCH_LIVE_VIEW_TIMEOUT_S (900).
 * JSON: bench/results/live-view-<timestamp>.json.
 */
import { CdpConnection } from '@stageflow/cdp';
import { LIVE_VIEW_LIMITS, RedisKeys, type StageSession } from '@stageflow/contracts';
import { ProfileLeases } from '@stageflow/leases';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { keyCommands } from '../apps/live-view-relay/src/app/views/input-mapping';
import { DEFAULT_STAGE_VIEW_OPTIONS } from '../apps/live-view-relay/src/app/views/stage-view';
import {
  deleteStackKeys,
  issueTicket,
  killChromiumOf,
  liveViewUrl,
  openStageSession,
  PageProbe,
  removeStack,
  stackDirs,
  startLiveViewServices,
  startSite,
  ViewerClient,
  waitFor,
  type LiveViewServices,
  type Site,
  type Stack,
} from '../apps/live-view-relay/src/testing/live-view.harness';
import { ratio, stats, writeResult, type Stats } from './browser.bench';

const KEYS_N = Number(process.env['STAGEFLOW_BENCH_LIVE_VIEW_N'] ?? 40);
const ROUNDS = Number(process.env['STAGEFLOW_BENCH_LIVE_VIEW_ROUNDS'] ?? 4);
const WINDOW_MS = Number(process.env['STAGEFLOW_BENCH_LIVE_VIEW_WINDOW_MS'] ?? 3000);
const TIMEOUT_S = Number(process.env['STAGEFLOW_BENCH_LIVE_VIEW_TIMEOUT_S'] ?? 900);
const KEY_WARMUP = 5;
/** Frames before this much of a window has passed are not counted (the screencast's start, the first screenshot). */
const WARM_MS = 1000;
/** A paused socket takes a while to fill the kernel's and the api's buffers before the relay sees it blocked. */
const STALL_SETTLE_MS = Number(process.env['STAGEFLOW_BENCH_LIVE_VIEW_STALL_MS'] ?? 4000);
/** Waits longer than this for a changed frame count as lost. */
const FRAME_TIMEOUT_MS = 3000;

const TARGETS = { inputP50Ms: 60, inputP95Ms: 150, fps: 25, stalledRatio: 0.9 };

/** Chrome's screencast as the relay asks for it (stage-view.ts). */
const SCREENCAST = { format: 'jpeg', quality: LIVE_VIEW_LIMITS.jpegQuality, maxWidth: LIVE_VIEW_LIMITS.maxFrameSize, maxHeight: LIVE_VIEW_LIMITS.maxFrameSize };

const PAGES: Record<string, string> = {
  // Repaints only when typed into: the caret is transparent (its blink would send frames).
  '/typing': `<title>typing</title><body style="margin:0">
    <div id="area" style="position:absolute;inset:0;background:#888"></div>
    <input id="field" style="position:absolute;left:40px;top:40px;width:300px;height:40px;caret-color:transparent">
    <script>
      const colours = ['#d33', '#3a3', '#33d', '#dd3', '#3dd', '#d3d', '#f80', '#080'];
      const field = document.getElementById('field');
      field.addEventListener('input', () => { document.getElementById('area').style.background = colours[field.value.length % colours.length]; });
    </script></body>`,
  // window.animate(on, noisy): moves a box, shifts the background and counts, every
  // animation frame; `noisy` also repaints random noise over the page (large JPEG frames).
  '/animated': `<title>animated</title><body style="margin:0;overflow:hidden">
    <canvas id="noise" width="400" height="300" style="position:absolute;inset:0;width:100%;height:100%;image-rendering:pixelated;display:none"></canvas>
    <div id="box" style="position:absolute;left:0;top:60px;width:200px;height:200px;background:#36c"></div>
    <div id="count" style="position:absolute;left:20px;top:300px;font:48px sans-serif">0</div>
    <script>
      let on = false, noisy = false, n = 0;
      const box = document.getElementById('box'), count = document.getElementById('count'), canvas = document.getElementById('noise');
      const ctx = canvas.getContext('2d'), pixels = ctx.createImageData(canvas.width, canvas.height), words = new Uint32Array(pixels.data.buffer);
      function tick(t) {
        if (!on) return;
        n++;
        box.style.transform = 'translateX(' + ((t / 4) % 600) + 'px)';
        document.body.style.background = 'hsl(' + ((t / 10) % 360) + ',60%,80%)';
        count.textContent = String(n);
        if (noisy) {
          for (let i = 0; i < words.length; i++) words[i] = (Math.random() * 0x1000000) | 0xff000000;
          ctx.putImageData(pixels, 0, 0);
        }
        requestAnimationFrame(tick);
      }
      window.animate = (v, withNoise) => {
        noisy = !!withNoise;
        canvas.style.display = noisy ? 'block' : 'none';
        if (v && !on) { on = true; requestAnimationFrame(tick); } else { on = v; }
        return n;
      };
    </script></body>`,
};

const PIPELINE = `name: live-view-bench
max_active_stages: 4
stages:
  - { id: typing, command: "true" }
  - { id: animated, command: "true" }
`;

/** Waits `ms`; rejects at once when the bench is aborted, so every loop of it stops there. */
const sleep = (b: Bench, ms: number) => delay(ms, undefined, { signal: b.signal });

// ---------------------------------------------------------------- CPU of a process

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

// ---------------------------------------------------------------- the raw side

/** A tab of the same browser, driven over a direct CDP connection: screencast acked at once. */
class RawTab {
  /** Every screencast frame: when it arrived and its (base64) data. */
  readonly frames: Array<{ at: number; data: string }> = [];
  private readonly listeners = new Set<() => void>();

  private constructor(
    private readonly cdp: CdpConnection,
    readonly targetId: string,
    readonly sessionId: string,
  ) {
    cdp.on<{ data: string; sessionId: number }>('Page.screencastFrame', (p, s) => {
      if (s !== this.sessionId) return;
      this.frames.push({ at: performance.now(), data: p.data });
      void cdp.send('Page.screencastFrameAck', { sessionId: p.sessionId }, { sessionId: s }).catch(() => undefined);
      for (const l of [...this.listeners]) l();
    });
  }

  /** In a window of its own, so it is that window's front tab whatever else the browser opens (headless paints only those). */
  static async open(cdp: CdpConnection, url: string): Promise<RawTab> {
    const { targetId } = await cdp.send<{ targetId: string }>('Target.createTarget', { url, newWindow: true });
    const tab = new RawTab(cdp, targetId, await cdp.attachToTab(targetId));
    await waitFor(`${url} to load in the raw tab`, async () => (await tab.evaluate<string>('document.readyState')) === 'complete', 30_000);
    return tab;
  }

  evaluate<T>(expression: string): Promise<T> {
    return this.cdp
      .send<{ result: { value: T } }>('Runtime.evaluate', { expression, returnByValue: true }, { sessionId: this.sessionId, timeoutMs: 10_000 })
      .then((r) => r.result.value);
  }

  async startScreencast(): Promise<void> {
    await this.cdp.send('Page.startScreencast', SCREENCAST, { sessionId: this.sessionId });
  }

  async stopScreencast(): Promise<void> {
    await this.cdp.send('Page.stopScreencast', {}, { sessionId: this.sessionId });
  }

  /** Presses a key as the relay does (its own key mapping), each command awaited in order. */
  async press(key: string): Promise<void> {
    for (const c of keyCommands({ type: 'key', action: 'press', key })) await this.cdp.send(c.method, c.params, { sessionId: this.sessionId });
  }

  /** The first frame from index `from` on that differs from `previous`. */
  nextChangedFrame(from: number, previous: string | undefined): Promise<{ at: number; index: number }> {
    return untilFound(this.listeners, () => {
      for (let i = from; i < this.frames.length; i++) if (this.frames[i].data !== previous) return { at: this.frames[i].at, index: i };
      return undefined;
    });
  }

  close(): Promise<void> {
    return this.cdp.closeTab(this.targetId).catch(() => undefined);
  }
}

/** Resolves with the first value `find` returns, checked whenever a listener fires; rejects after FRAME_TIMEOUT_MS. */
function untilFound<T>(listeners: Set<() => void>, find: () => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const found = find();
      if (found === undefined) return;
      clearTimeout(timer);
      listeners.delete(check);
      resolve(found);
    };
    const timer = setTimeout(() => {
      listeners.delete(check);
      reject(new Error(`no changed frame within ${FRAME_TIMEOUT_MS} ms`));
    }, FRAME_TIMEOUT_MS);
    listeners.add(check);
    check();
  });
}

// ---------------------------------------------------------------- the Stageflow side

interface Bench {
  /** Aborted on time-out or SIGINT/SIGTERM. */
  signal: AbortSignal;
  stack: Stack;
  services: LiveViewServices;
  runId: string;
  viewers: Set<ViewerClient>;
}

/** A viewer through the api, as the console connects: a ticket, the WebSocket, `ready`. */
async function connectViewer(b: Bench, stageId: string, mode: 'interactive' | 'view-only'): Promise<ViewerClient> {
  const t = await issueTicket(b.services.apiUrl, b.runId, stageId, mode);
  const viewer = await ViewerClient.connect(liveViewUrl(b.services.apiUrl, t.path, t.ticket));
  b.viewers.add(viewer);
  await viewer.nextOfType('ready');
  return viewer;
}

function closeViewer(b: Bench, viewer: ViewerClient): void {
  viewer.close();
  b.viewers.delete(viewer);
}

/** The first frame from index `from` on that differs from `previous` (bytes), with its arrival time. */
async function nextChangedViewerFrame(viewer: ViewerClient, from: number, previous: Buffer | undefined): Promise<number> {
  for (let i = from; ; i++) {
    await viewer.frameCount(i + 1, FRAME_TIMEOUT_MS);
    if (!previous || !viewer.frames[i].equals(previous)) return viewer.frameTimes[i];
  }
}

// ---------------------------------------------------------------- 1. input to changed frame

interface InputResult {
  raw: Stats;
  relay: Stats;
  ratioP50: number;
  ratioP95: number;
  lost: { raw: number; relay: number };
  typed: { raw: number; relay: number; expected: number };
}

/**
 * The stage's tab as browser-host leaves it must be drawn: Chromium paints only the
 * front tab of a window, so browser-host gives every tab (stage, spare) a window of its
 * own. A regression check before the measurements: the tab's visibility, and how many
 * of a few keys typed through the view gave a new frame within 1 s.
 */
interface HiddenTabCheck {
  visibility: string;
  keys: number;
  changedFrames: number;
  /** Characters the page got (the keys did land). */
  landed: number;
}

async function hiddenTabCheck(b: Bench, page: PageProbe): Promise<HiddenTabCheck> {
  await page.evaluate('document.getElementById("field").focus()');
  const visibility = await page.evaluate<string>('document.visibilityState');
  const viewer = await connectViewer(b, 'typing', 'interactive');
  await viewer.frameCount(1);
  await sleep(b, 300);
  const keys = 3;
  let changedFrames = 0;
  for (let i = 0; i < keys; i++) {
    const from = viewer.frames.length;
    viewer.send({ type: 'key', action: 'press', key: 'b' });
    await sleep(b, 1000);
    if (viewer.frames.slice(from).some((f) => !f.equals(viewer.frames[from - 1]))) changedFrames += 1;
  }
  closeViewer(b, viewer);
  const landed = await page.evaluate<number>('document.getElementById("field").value.length');
  await page.evaluate('document.getElementById("field").value = ""');
  return { visibility, keys, changedFrames, landed };
}

async function inputBench(b: Bench, page: PageProbe, raw: RawTab): Promise<InputResult> {
  const focus = 'document.getElementById("field").focus(); document.activeElement.id';
  if ((await page.evaluate<string>(focus)) !== 'field' || (await raw.evaluate<string>(focus)) !== 'field') throw new Error('the typing pages\' inputs did not take the focus');
  await raw.startScreencast();
  const viewer = await connectViewer(b, 'typing', 'interactive');
  await viewer.frameCount(1);
  await sleep(b, 500);

  const lost = { raw: 0, relay: 0 };
  const rawOnce = async (): Promise<number | undefined> => {
    const from = raw.frames.length;
    const previous = raw.frames[from - 1]?.data;
    const t0 = performance.now();
    const changed = raw.nextChangedFrame(from, previous);
    changed.catch(() => undefined);
    await raw.press('a');
    return changed.then((f) => f.at - t0).catch(() => {
      lost.raw += 1;
      return undefined;
    });
  };
  const relayOnce = async (): Promise<number | undefined> => {
    const from = viewer.frames.length;
    const previous = viewer.frames[from - 1];
    const t0 = performance.now();
    viewer.send({ type: 'key', action: 'press', key: 'a' });
    return nextChangedViewerFrame(viewer, from, previous).then(
      (at) => at - t0,
      () => {
        lost.relay += 1;
        return undefined;
      },
    );
  };
  // Idle between keys (longer than the relay's frame interval, jittered off the display's beat).
  const gap = () => sleep(b, 150 + Math.random() * 100);

  const rawSamples: number[] = [];
  const relaySamples: number[] = [];
  for (let i = 0; i < KEY_WARMUP + KEYS_N; i++) {
    const pair: Array<[() => Promise<number | undefined>, number[]]> = [
      [rawOnce, rawSamples],
      [relayOnce, relaySamples],
    ];
    if (i % 2 === 1) pair.reverse();
    for (const [once, samples] of pair) {
      const ms = await once();
      if (ms !== undefined && i >= KEY_WARMUP) samples.push(ms);
      await gap();
    }
  }
  closeViewer(b, viewer);
  await raw.stopScreencast();
  const keys = KEY_WARMUP + KEYS_N;
  const length = 'document.getElementById("field").value.length';
  const typed = { raw: await raw.evaluate<number>(length), relay: await page.evaluate<number>(length), expected: keys };
  const r = stats(rawSamples);
  const s = stats(relaySamples);
  return { raw: r, relay: s, ratioP50: ratio(s.p50, r.p50), ratioP95: ratio(s.p95, r.p95), lost, typed };
}

// ---------------------------------------------------------------- 2. and 3. frames a second

interface Window {
  /** Frames a second over the window. */
  fps: number;
  frames: number;
  /** Gaps between consecutive frames in the window, ms. */
  gaps: number[];
  bytes: number;
}

/** Frames with arrival times in [start, start + WINDOW_MS). */
function windowOf(times: number[], sizes: number[], start: number): Window {
  const picked: number[] = [];
  let bytes = 0;
  times.forEach((t, i) => {
    if (t >= start && t < start + WINDOW_MS) {
      picked.push(t);
      bytes += sizes[i];
    }
  });
  return { fps: Math.round((picked.length / (WINDOW_MS / 1000)) * 10) / 10, frames: picked.length, gaps: picked.slice(1).map((t, i) => t - picked[i]), bytes };
}

const viewerWindow = (v: ViewerClient, start: number) => windowOf(v.frameTimes, v.frames.map((f) => f.length), start);

interface CpuWindow {
  relayMs: number;
  apiMs: number;
}

/** Waits WARM_MS, then one window of WINDOW_MS: returns its start and the relay's and the api's CPU over it. */
async function measureWindow(b: Bench): Promise<{ start: number; cpu: CpuWindow }> {
  await sleep(b, WARM_MS);
  const pids = [b.services.relay.pid as number, b.services.api.pid as number];
  const before = await Promise.all(pids.map(cpuMs));
  const start = performance.now();
  await sleep(b, WINDOW_MS);
  const after = await Promise.all(pids.map(cpuMs));
  return { start, cpu: { relayMs: after[0] - before[0], apiMs: after[1] - before[1] } };
}

interface FpsSummary {
  fps: Stats;
  gapMs: Stats;
  meanFrameBytes: number;
}

function summarise(windows: Window[]): FpsSummary {
  const frames = windows.reduce((n, w) => n + w.frames, 0);
  return {
    fps: stats(windows.map((w) => w.fps)),
    gapMs: stats(windows.flatMap((w) => w.gaps)),
    meanFrameBytes: Math.round(windows.reduce((n, w) => n + w.bytes, 0) / Math.max(1, frames)),
  };
}

interface CpuSummary {
  /** Relay CPU as % of one core, per window. */
  relayPercent: Stats;
  apiPercent: Stats;
  /** Relay CPU ms per frame delivered to a viewer. */
  relayMsPerViewerFrame: Stats;
}

function cpuSummary(cpu: CpuWindow[], viewerFrames: number[]): CpuSummary {
  const pct = (ms: number) => (ms / WINDOW_MS) * 100;
  return {
    relayPercent: stats(cpu.map((c) => pct(c.relayMs))),
    apiPercent: stats(cpu.map((c) => pct(c.apiMs))),
    relayMsPerViewerFrame: stats(cpu.map((c, i) => c.relayMs / Math.max(1, viewerFrames[i]))),
  };
}

interface FpsResult {
  raw: FpsSummary;
  oneViewer: FpsSummary;
  twoViewers: FpsSummary;
  ratioOneViewerToRaw: number;
  cpu: { oneViewer: CpuSummary; twoViewers: CpuSummary; secondViewerAddsRelayPercent: number };
}

interface StalledResult {
  alone: FpsSummary;
  besideStalled: FpsSummary;
  /** The reading viewer's fps beside a stalled one / alone, per round (p50 over rounds). */
  ratio: Stats;
  perRound: number[];
  /**
   * Per round: frames the stalled viewer got within 1 s of reading again (what sat in
   * the buffers for it, plus about a second of new ones), and frames the reading viewer
   * got while the other did not read. Far fewer than the reader's: the relay was
   * holding the stalled viewer's frames back (newest only) rather than the kernel
   * buffering them all.
   */
  stalledBacklog: Array<{ frames: number; readerGotMeanwhile: number }>;
  /** The relay's CPU with large (noisy) frames: one viewer, two reading, one reading beside one stalled (ms per frame the readers got). */
  cpu: { alone: CpuSummary; twoReading: CpuSummary; besideStalled: CpuSummary };
}

async function fpsBench(b: Bench, page: PageProbe, raw: RawTab): Promise<{ fps: FpsResult; stalled: StalledResult }> {
  const rawWindows: Window[] = [];
  const one: Window[] = [];
  const two: Window[] = [];
  const oneCpu: CpuWindow[] = [];
  const twoCpu: CpuWindow[] = [];
  const alone: Window[] = [];
  const beside: Window[] = [];
  const aloneCpu: CpuWindow[] = [];
  const besideCpu: CpuWindow[] = [];
  const pairCpu: CpuWindow[] = [];
  const pairFrames: number[] = [];
  const backlog: StalledResult['stalledBacklog'] = [];

  const rawOnce = async () => {
    await raw.evaluate('window.animate(true)');
    const from = raw.frames.length;
    await raw.startScreencast();
    const { start } = await measureWindow(b);
    await raw.stopScreencast();
    await raw.evaluate('window.animate(false)');
    const got = raw.frames.slice(from);
    rawWindows.push(windowOf(got.map((f) => f.at), got.map((f) => (f.data.length * 3) / 4), start));
  };
  const relayOnce = async (viewers: number) => {
    await page.evaluate('window.animate(true)');
    const vs: ViewerClient[] = [];
    for (let i = 0; i < viewers; i++) vs.push(await connectViewer(b, 'animated', 'view-only'));
    const { start, cpu } = await measureWindow(b);
    const windows = vs.map((v) => viewerWindow(v, start));
    for (const v of vs) closeViewer(b, v);
    await page.evaluate('window.animate(false)');
    (viewers === 1 ? one : two).push(...windows);
    (viewers === 1 ? oneCpu : twoCpu).push(cpu);
  };
  /** One viewer reads throughout: alone, beside one that stops reading, beside one that reads (reversed every other round). */
  const stalledOnce = async (stalledFirst: boolean) => {
    // Noisy frames, so the stalled viewer's socket buffers fill within the settle time.
    await page.evaluate('window.animate(true, true)');
    const reader = await connectViewer(b, 'animated', 'view-only');
    const aloneOnce = async () => {
      const { start, cpu } = await measureWindow(b);
      alone.push(viewerWindow(reader, start));
      aloneCpu.push(cpu);
    };
    const besideOnce = async () => {
      const stalled = await connectViewer(b, 'animated', 'view-only');
      await stalled.frameCount(1);
      stalled.socket.pause();
      const readerFrom = reader.frames.length;
      await sleep(b, STALL_SETTLE_MS);
      const { start, cpu } = await measureWindow(b);
      beside.push(viewerWindow(reader, start));
      besideCpu.push(cpu);
      const before = stalled.frames.length;
      const readerGot = reader.frames.length - readerFrom;
      stalled.socket.resume();
      await sleep(b, 1000);
      // What reached the stalled viewer once it read again: what sat in its buffers (plus ~1 s of new frames).
      backlog.push({ frames: stalled.frames.length - before, readerGotMeanwhile: readerGot });
      closeViewer(b, stalled);
    };
    /** Both reading: the relay's CPU for two viewers of large frames. */
    const pairOnce = async () => {
      const second = await connectViewer(b, 'animated', 'view-only');
      const { start, cpu } = await measureWindow(b);
      pairCpu.push(cpu);
      pairFrames.push(viewerWindow(reader, start).frames + viewerWindow(second, start).frames);
      closeViewer(b, second);
    };
    const steps = [aloneOnce, besideOnce, pairOnce];
    if (stalledFirst) steps.reverse();
    for (const step of steps) await step();
    closeViewer(b, reader);
    await page.evaluate('window.animate(false)');
  };

  for (let round = 0; round < ROUNDS; round++) {
    const steps = [rawOnce, () => relayOnce(1), () => relayOnce(2)];
    if (round % 2 === 1) steps.reverse();
    for (const step of steps) await step();
    await stalledOnce(round % 2 === 1);
    console.log(`  round ${round + 1}/${ROUNDS}: raw ${rawWindows.at(-1)?.fps} fps, 1 viewer ${one.at(-1)?.fps}, 2 viewers ${two.slice(-2).map((w) => w.fps).join('/')}, alone ${alone.at(-1)?.fps} vs beside a stalled one ${beside.at(-1)?.fps}`);
  }

  const perRound = alone.map((a, i) => beside[i].fps / Math.max(0.1, a.fps));
  const oneSummary = summarise(one);
  const rawSummary = summarise(rawWindows);
  const oneCpuSummary = cpuSummary(oneCpu, one.map((w) => w.frames));
  const twoCpuSummary = cpuSummary(twoCpu, twoCpu.map((_, i) => two[2 * i].frames + two[2 * i + 1].frames));
  return {
    fps: {
      raw: rawSummary,
      oneViewer: oneSummary,
      twoViewers: summarise(two),
      ratioOneViewerToRaw: ratio(oneSummary.fps.p50, rawSummary.fps.p50),
      cpu: {
        oneViewer: oneCpuSummary,
        twoViewers: twoCpuSummary,
        secondViewerAddsRelayPercent: Math.round((twoCpuSummary.relayPercent.mean - oneCpuSummary.relayPercent.mean) * 100) / 100,
      },
    },
    stalled: {
      alone: summarise(alone),
      besideStalled: summarise(beside),
      ratio: stats(perRound),
      perRound,
      stalledBacklog: backlog,
      cpu: {
        alone: cpuSummary(aloneCpu, alone.map((w) => w.frames)),
        twoReading: cpuSummary(pairCpu, pairFrames),
        besideStalled: cpuSummary(besideCpu, beside.map((w) => w.frames)),
      },
    },
  };
}

// ---------------------------------------------------------------- output

const row = (label: string, ...cells: Array<string | number>) => `${label.padEnd(52)}${cells.map((c) => String(c).padStart(11)).join('')}`;
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

function print(hidden: HiddenTabCheck, input: InputResult, fps: FpsResult, stalled: StalledResult): void {
  const s = stalled.ratio.p50;
  console.log(
    [
      `stage tab as browser-host leaves it (a window of its own, beside the spare tab's): ${hidden.visibility}; ${hidden.changedFrames} of ${hidden.keys} keys through the relay gave a new frame within 1 s (${hidden.landed} landed in the page)`,
      '  the measurements below use the tabs as they are; raw tabs get a window each too',
      '',
      `live-view bench 1: key to changed frame, N=${KEYS_N} each (after ${KEY_WARMUP} warm-up), interleaved`,
      row('', 'p50 ms', 'p95 ms', 'n', 'lost'),
      row('raw CDP (dispatchKeyEvent -> screencastFrame)', input.raw.p50, input.raw.p95, input.raw.n, input.lost.raw),
      row('api + relay (key message -> binary frame)', input.relay.p50, input.relay.p95, input.relay.n, input.lost.relay),
      `ratio relay/raw: p50 ${input.ratioP50}x, p95 ${input.ratioP95}x; target p50 ≤ ${TARGETS.inputP50Ms} ms: ${met(input.relay.p50 <= TARGETS.inputP50Ms)}, p95 ≤ ${TARGETS.inputP95Ms} ms: ${met(input.relay.p95 <= TARGETS.inputP95Ms)}`,
      `  characters in the inputs: raw ${input.typed.raw}, relay ${input.typed.relay} (sent ${input.typed.expected} each)`,
      '',
      `live-view bench 2: frames a second on a requestAnimationFrame page, ${ROUNDS} rounds of ${WINDOW_MS} ms each, interleaved`,
      row('', 'fps p50', 'fps p95', 'gap p50 ms', 'gap p95 ms', 'KB/frame'),
      row('raw CDP screencast (acked at once)', fps.raw.fps.p50, fps.raw.fps.p95, fps.raw.gapMs.p50, fps.raw.gapMs.p95, Math.round(fps.raw.meanFrameBytes / 1024)),
      row('api + relay, 1 viewer', fps.oneViewer.fps.p50, fps.oneViewer.fps.p95, fps.oneViewer.gapMs.p50, fps.oneViewer.gapMs.p95, Math.round(fps.oneViewer.meanFrameBytes / 1024)),
      row('api + relay, 2 viewers (each)', fps.twoViewers.fps.p50, fps.twoViewers.fps.p95, fps.twoViewers.gapMs.p50, fps.twoViewers.gapMs.p95, Math.round(fps.twoViewers.meanFrameBytes / 1024)),
      `ratio 1 viewer/raw (fps p50): ${fps.ratioOneViewerToRaw}x; target ≥ ${TARGETS.fps} fps: ${met(fps.oneViewer.fps.p50 >= TARGETS.fps)}`,
      `  the relay acks a frame no sooner than ${DEFAULT_STAGE_VIEW_OPTIONS.minFrameIntervalMs} ms after the last ack (minFrameIntervalMs): at most ${Math.floor(1000 / DEFAULT_STAGE_VIEW_OPTIONS.minFrameIntervalMs)} fps`,
      '  CPU over each window, % of one core (utime+stime from /proc/<pid>/stat of the relay and api processes):',
      row('', 'relay mean', 'relay p95', 'api mean', 'ms/frame'),
      row('  1 viewer', fps.cpu.oneViewer.relayPercent.mean, fps.cpu.oneViewer.relayPercent.p95, fps.cpu.oneViewer.apiPercent.mean, fps.cpu.oneViewer.relayMsPerViewerFrame.mean),
      row('  2 viewers', fps.cpu.twoViewers.relayPercent.mean, fps.cpu.twoViewers.relayPercent.p95, fps.cpu.twoViewers.apiPercent.mean, fps.cpu.twoViewers.relayMsPerViewerFrame.mean),
      `  the second viewer adds ${fps.cpu.secondViewerAddsRelayPercent} % of a core to the relay (mean to mean; /proc counts 10 ms ticks, ±0.3 % a window)`,
      '',
      `live-view bench 3: two viewers on the page with noise, one stops reading (socket paused ${STALL_SETTLE_MS} ms before the window), ${ROUNDS} rounds`,
      row('', 'fps p50', 'fps p95', 'gap p50 ms', 'gap p95 ms', 'KB/frame'),
      row('reading viewer alone', stalled.alone.fps.p50, stalled.alone.fps.p95, stalled.alone.gapMs.p50, stalled.alone.gapMs.p95, Math.round(stalled.alone.meanFrameBytes / 1024)),
      row('reading viewer beside a stalled one', stalled.besideStalled.fps.p50, stalled.besideStalled.fps.p95, stalled.besideStalled.gapMs.p50, stalled.besideStalled.gapMs.p95, Math.round(stalled.besideStalled.meanFrameBytes / 1024)),
      `ratio beside/alone: per round ${stalled.perRound.map((x) => Math.round(x * 100) / 100).join(', ')}, p50 ${Math.round(s * 100) / 100}x (of the fps p50s: ${ratio(stalled.besideStalled.fps.p50, stalled.alone.fps.p50)}x); target within 10%: ${met(s >= TARGETS.stalledRatio)}`,
      '  CPU with these large frames, % of one core over each window:',
      row('', 'relay mean', 'relay p95', 'api mean', 'ms/frame'),
      ...(
        [
          ['  1 viewer', stalled.cpu.alone],
          ['  2 viewers reading', stalled.cpu.twoReading],
          ['  1 reading, 1 stalled', stalled.cpu.besideStalled],
        ] as Array<[string, CpuSummary]>
      ).map(([label, c]) => row(label, c.relayPercent.mean, c.relayPercent.p95, c.apiPercent.mean, c.relayMsPerViewerFrame.mean)),
      `  per round, frames the stalled viewer got in the 1 s after it read again / frames the reader got while it did not read: ${stalled.stalledBacklog.map((x) => `${x.frames}/${x.readerGotMeanwhile}`).join(', ')}`,
    ].join('\n'),
  );
}

// ---------------------------------------------------------------- the bench

export interface LiveViewBenchResult {
  benchmark: 'live-view';
  date: string;
  node: string;
  keys: number;
  rounds: number;
  windowMs: number;
  targets: typeof TARGETS;
  hiddenTab: HiddenTabCheck;
  input: InputResult & { withinTarget: boolean };
  fps: FpsResult & { withinTarget: boolean };
  stalled: StalledResult & { withinTarget: boolean };
}

/** Aborts after TIMEOUT_S or on SIGINT/SIGTERM, so the bench stops where it is and cleans up. */
function benchAbort(): { signal: AbortSignal; aborted: Promise<never>; dispose(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`the live-view bench took over ${TIMEOUT_S} s (STAGEFLOW_BENCH_LIVE_VIEW_TIMEOUT_S)`)), TIMEOUT_S * 1000);
  const onSignal = (signal: string) => controller.abort(new Error(`stopped by ${signal}`));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
  aborted.catch(() => undefined);
  return {
    signal: controller.signal,
    aborted,
    dispose: () => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

export async function runLiveViewBench(redisUrl: string): Promise<LiveViewBenchResult> {
  const abort = benchAbort();
  const stack = await stackDirs('browser: {}\n');
  let site: Site | undefined;
  let services: LiveViewServices | undefined;
  let leases: ProfileLeases | undefined;
  let cdp: CdpConnection | undefined;
  const probes: PageProbe[] = [];
  const rawTabs: RawTab[] = [];
  let b: Bench | undefined;
  let running: Promise<LiveViewBenchResult> | undefined;
  try {
    const work = async (): Promise<LiveViewBenchResult> => {
      const pages = await startSite(PAGES);
      site = pages;
      const started = await startLiveViewServices(stack, redisUrl, {}, abort.signal);
      services = started;
      const apiUrl = started.apiUrl;
      const created = await fetch(`${apiUrl}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ yaml: PIPELINE }) });
      if (created.status !== 201) throw new Error(`the api answered ${created.status} to the bench's run: ${await created.text()}`);
      const runId = ((await created.json()) as { id: string }).id;
      b = { signal: abort.signal, stack, services: started, runId, viewers: new Set() };
      leases = new ProfileLeases({ redis: redisUrl, keys: new RedisKeys(stack.prefix) });
      const grant = await leases.acquire('local', 'bench', runId);
      if (grant.status !== 'granted') throw new Error('the bench profile\'s lease is not free');
      const open = (stageId: string): Promise<StageSession> => openStageSession(started.hostUrl, { runId, stageId, profile: 'bench', leaseToken: grant.grant.token });
      const typing = await open('typing');
      const animated = await open('animated');
      const typingPage = await PageProbe.attach(typing.cdpEndpoint, typing.targetId);
      probes.push(typingPage);
      await typingPage.goto(pages.url('/typing'));
      const animatedPage = await PageProbe.attach(animated.cdpEndpoint, animated.targetId);
      probes.push(animatedPage);
      await animatedPage.goto(pages.url('/animated'));
      cdp = await CdpConnection.connect(typing.cdpEndpoint, { callTimeoutMs: 30_000 });
      rawTabs.push(await RawTab.open(cdp, pages.url('/typing')));
      rawTabs.push(await RawTab.open(cdp, pages.url('/animated')));

      const hiddenTab = await hiddenTabCheck(b, typingPage);
      const input = await inputBench(b, typingPage, rawTabs[0]);
      const { fps, stalled } = await fpsBench(b, animatedPage, rawTabs[1]);
      print(hiddenTab, input, fps, stalled);
      const result: LiveViewBenchResult = {
        benchmark: 'live-view',
        date: new Date().toISOString(),
        node: process.version,
        keys: KEYS_N,
        rounds: ROUNDS,
        windowMs: WINDOW_MS,
        targets: TARGETS,
        hiddenTab,
        input: { ...input, withinTarget: input.relay.p50 <= TARGETS.inputP50Ms && input.relay.p95 <= TARGETS.inputP95Ms },
        fps: { ...fps, withinTarget: fps.oneViewer.fps.p50 >= TARGETS.fps },
        stalled: { ...stalled, withinTarget: stalled.ratio.p50 >= TARGETS.stalledRatio },
      };
      console.log(`wrote ${await writeResult('live-view', result)}`);
      return result;
    };
    running = work();
    return await Promise.race([running, abort.aborted]);
  } catch (error) {
    // The services' own words on what went wrong, before their folder goes.
    for (const log of ['browser-host.log', 'relay.log', 'api.log']) {
      const text = await readFile(join(stack.root, log), 'utf8').catch(() => '');
      if (text) console.error(`--- last lines of ${log}:\n${text.trimEnd().split('\n').slice(-15).join('\n')}`);
    }
    throw error;
  } finally {
    abort.dispose();
    // After an abort the work stops at its next wait (all of them are bounded, a
    // service's boot included) and stops what it was starting; then the rest goes.
    await Promise.race([running?.catch(() => undefined), delay(30_000, undefined, { ref: false })]);
    for (const viewer of b?.viewers ?? []) viewer.close();
    for (const tab of rawTabs) await tab.close();
    await cdp?.close();
    for (const probe of probes) await probe.close().catch(() => undefined);
    if (b) await fetch(`${b.services.apiUrl}/api/runs/${b.runId}/cancel`, { method: 'POST' }).catch(() => undefined);
    await services?.stop();
    await killChromiumOf(stack.hostId);
    await leases?.close();
    await site?.close();
    await deleteStackKeys(stack, redisUrl).catch(() => undefined);
    await removeStack(stack);
  }
}
