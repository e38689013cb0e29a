// How much the 3-D view may cost the page: the levels it renders at and the automatic choice
// between them, from the frames the page actually gets.
//
// Why (issue 32, item 7): without a GPU, Chromium runs WebGL — and, with --use-angle=
// swiftshader or a GPU it does not trust, its compositor and accelerated 2-D canvases as
// well — on SwiftShader or llvmpipe, emulated on the CPU in the GPU process. There the 3-D
// view's canvas and the plots' canvases made every frame of the page wait for the emulated
// GPU (the GPU process at 99 %: the page drew 5.5 frames/s and the plots 4.7–6.1 Hz beside
// two 1 kHz sites; traced, the GPU process's main thread spent 93 % of its time in
// SwapBuffers waiting for SwiftShader to finish the frame). The page cannot pick the
// browser's configuration, so it measures what it gets: requestAnimationFrame fires once
// per frame the browser produces, and when the emulated GPU (or a starved main thread)
// holds the frames, that rate falls. The budget then steps the view down, level by level,
// to a 2-D canvas drawing that costs the GPU nothing but one small texture upload; and
// probes one level up again after a while at full rate, backing off when the probe fails.
//
// The plots' canvases are CPU-backed in every configuration (plots.ts), and a software
// WebGL (WEBGL_debug_renderer_info naming SwiftShader, llvmpipe, softpipe) starts at the
// reduced level, never probing the full one.

export type RenderMode = "webgl" | "webgl-reduced" | "2d";

export interface Level {
  mode: RenderMode;
  /** The drawing buffer's pixels per CSS pixel. */
  pixelRatio: number;
  /** Most draws per second (a draw happens only when the picture changed). */
  maxHz: number;
  /** For the operator: what the level is. */
  label: string;
}

export function levels(devicePixelRatio: number): Level[] {
  return [
    { mode: "webgl", pixelRatio: Math.min(Math.max(devicePixelRatio, 1), 2), maxHz: 60, label: "3-D" },
    { mode: "webgl-reduced", pixelRatio: 0.5, maxHz: 10, label: "3-D at half resolution, 10 Hz" },
    { mode: "webgl-reduced", pixelRatio: 0.35, maxHz: 4, label: "3-D at a third of the resolution, 4 Hz" },
    { mode: "2d", pixelRatio: 1, maxHz: 10, label: "2-D drawing (side and top views), 10 Hz" },
  ];
}
export const LEVEL_2D = 3;

/** Whether a WebGL renderer string names a GPU emulated on the CPU. */
export function isSoftwareRenderer(name: string): boolean {
  return /swiftshader|llvmpipe|softpipe|software|lavapipe|microsoft basic render/i.test(name);
}

/** The renderer's name as WEBGL_debug_renderer_info gives it (else the masked RENDERER). */
export function rendererName(gl: WebGLRenderingContext | WebGL2RenderingContext): string {
  try {
    const info = gl.getExtension("WEBGL_debug_renderer_info");
    return String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER) ?? "");
  } catch {
    return "";
  }
}

/** Frames per second below which the view steps down: the plots need 25 Hz, and a frame
 *  rate below 27 has no room left for them (a 30 Hz display still passes). */
export const LOW_FPS = 27;
/** Frames per second (in every one of the last PROBE_AFTER_S windows) that invite a probe
 *  one level up. */
export const HIGH_FPS = 50;
const PROBE_AFTER_S = 15;
const FIRST_BACKOFF_S = 30;
const MAX_BACKOFF_S = 600;
/** Seconds to wait after a change before judging its frame rate, and after mounting (the
 *  page's load, the first telemetry and the shaders' compilation make the first frames slow). */
const SETTLE_S = 4;

export type Choice = "auto" | RenderMode;

export interface BudgetState {
  level: number;
  mode: RenderMode;
  choice: Choice;
  /** Frames per second in the last completed one-second windows, newest last. */
  fps: number[];
  /** Why the level is what it is. */
  reason: string;
  /** Level changes made automatically so far. */
  changes: number;
}

/**
 * The automatic choice of level, fed one frame-rate sample per second (pure apart from the
 * clock it is given, so a test can drive it). `floor` is the first level allowed (the full
 * 3-D view is not offered on a software GL), `ceiling` the last (2-D, or the lowest WebGL
 * level while WebGL must be kept).
 */
export class LevelChooser {
  level: number;
  reason: string;
  changes = 0;
  readonly fps: number[] = [];
  private changedAt: number;
  private probeFrom: number | null = null;
  private probeAt = -Infinity;
  private backoffS = FIRST_BACKOFF_S;
  private nextProbe: number;

  constructor(readonly floor: number, readonly ceiling: number, now: number, reason: string) {
    this.level = floor;
    this.reason = reason;
    this.changedAt = now;
    this.nextProbe = now + FIRST_BACKOFF_S * 1000;
  }

  /** One second's frame rate; returns true when the level changed. */
  sample(fps: number, now: number): boolean {
    this.fps.push(fps);
    if (this.fps.length > 30) this.fps.shift();
    const since = (now - this.changedAt) / 1000;
    if (since < SETTLE_S) return false;
    // Three slow seconds in a row, or two very slow ones (below half the threshold).
    const last3 = this.fps.slice(-3);
    const last2 = this.fps.slice(-2);
    const slow = (last3.length === 3 && last3.every((f) => f < LOW_FPS)) ||
      (last2.length === 2 && last2.every((f) => f < LOW_FPS / 2));
    if (slow && this.level < this.ceiling) {
      const worst = Math.max(...last2);
      if (this.probeFrom !== null && now - this.probeAt < 20_000) {
        // The probe failed: back to where it came from, and wait twice as long next time.
        this.backoffS = Math.min(this.backoffS * 2, MAX_BACKOFF_S);
        const back = this.probeFrom;
        this.probeFrom = null;
        this.setLevel(back, now, `the page drew ${Math.round(worst)} frames/s when probing a higher level`);
        this.nextProbe = now + this.backoffS * 1000;
        return true;
      }
      // Far too few frames skip straight to the 2-D drawing.
      const next = worst < LOW_FPS / 2 ? this.ceiling : this.level + 1;
      this.setLevel(next, now, `the page drew ${Math.round(worst)} frames/s (below ${LOW_FPS})`);
      this.nextProbe = now + this.backoffS * 1000;
      return true;
    }
    if (this.probeFrom !== null && now - this.probeAt >= 20_000) {
      // The probe held: the higher level stays, and the backoff starts afresh.
      this.probeFrom = null;
      this.backoffS = FIRST_BACKOFF_S;
    }
    const calm = this.fps.slice(-PROBE_AFTER_S);
    if (this.level > this.floor && now >= this.nextProbe && calm.length >= PROBE_AFTER_S &&
        calm.every((f) => f >= HIGH_FPS)) {
      // Straight back to the first level: a fall caused by a passing load (a build beside
      // the browser) is undone in one step; a machine that cannot hold it falls back again.
      this.probeFrom = this.level;
      this.probeAt = now;
      this.nextProbe = now + this.backoffS * 1000;
      this.setLevel(this.floor, now, `probing: ${Math.round(Math.min(...calm))} frames/s or more for ${PROBE_AFTER_S} s`);
      return true;
    }
    return false;
  }

  /** Puts the level where the operator chose (or a failure forced) it, and judges the frame
   *  rate afresh from there. */
  set(level: number, now: number, reason: string): void {
    this.probeFrom = null;
    this.fps.length = 0;
    this.setLevel(level, now, reason);
    this.changes--;
  }

  private setLevel(level: number, now: number, reason: string): void {
    this.level = Math.max(this.floor, Math.min(this.ceiling, level));
    this.reason = reason;
    this.changedAt = now;
    this.changes++;
  }
}

/**
 * Counts the page's frames (requestAnimationFrame callbacks) in one-second windows while
 * the page is visible, and hands each window's rate to `onSecond`. A hidden page gets no
 * frames; its windows are skipped.
 */
export function meterFrames(onSecond: (fps: number, now: number) => void): void {
  let frames = 0;
  let windowStart = performance.now();
  let hiddenSeen = document.visibilityState === "hidden";
  document.addEventListener("visibilitychange", () => (hiddenSeen = true));
  const frame = (now: number) => {
    requestAnimationFrame(frame);
    frames++;
    const dt = now - windowStart;
    if (dt < 1000) return;
    if (!hiddenSeen && document.visibilityState === "visible") onSecond((frames * 1000) / dt, now);
    hiddenSeen = document.visibilityState === "hidden";
    frames = 0;
    windowStart = now;
  };
  requestAnimationFrame(frame);
  // A page whose frames stall entirely (rAF not firing for over 2 s) is measured too.
  setInterval(() => {
    const now = performance.now();
    if (now - windowStart > 2000 && document.visibilityState === "visible" && !hiddenSeen) {
      onSecond((frames * 1000) / (now - windowStart), now);
      frames = 0;
      windowStart = now;
    }
  }, 1000);
}
