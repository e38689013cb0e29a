// Live plots of the active site's telemetry (uPlot): a rolling 10 s window, redrawn at most
// once per animation frame and only when a sample arrived, and only the plots in view.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { el, stats, type Store } from "./store";
import type { TelemetryMsg } from "./protocol";

const WINDOW_S = 10;
// 10 s at the highest rate a client may subscribe to (60 Hz), with a margin.
const CAPACITY = 11 * 64;

/** A series' values: null is a gap (no value), undefined a point left out of a flat stretch. */
type Column = (number | null | undefined)[];

/**
 * The rolling window: one time column shared by every plot and one column per series, kept
 * as the very arrays uPlot draws from. A sample appends to them and samples older than the
 * window are cut from the front, so a redraw hands uPlot the same arrays again: nothing is
 * copied or allocated per frame (fresh copies of every column at 60 Hz kept the collector
 * and the main thread busy).
 *
 * A flat stretch keeps only its two ends: the points between become undefined, which uPlot
 * steps over without breaking the line. The picture is the same, and a bound, a held value
 * or an idle arm costs two points per redraw instead of 600.
 */
class Window {
  readonly t: number[] = [];
  private readonly cols: Column[] = [];

  column(): Column {
    const c: Column = new Array<number | null>(this.t.length).fill(null);
    this.cols.push(c);
    return c;
  }
  forget(): void {
    this.cols.length = 0;
  }
  /** Appends a time; the caller then appends one value to every column (with put). */
  push(t: number): void {
    // A second's margin before the window's start, so the line enters from the edge.
    const oldest = t - WINDOW_S - 1;
    let cut = 0;
    while (cut < this.t.length && (this.t[cut] < oldest || this.t.length - cut >= CAPACITY)) cut++;
    if (cut) {
      this.t.splice(0, cut);
      for (const c of this.cols) {
        // A flat stretch cut at its start gets its first point back, from the start cut off
        // (undefined lies only between two equal values).
        if (c.length > cut && c[cut] === undefined) {
          let k = cut - 1;
          while (k > 0 && c[k] === undefined) k--;
          c[cut] = c[k];
        }
        c.splice(0, cut);
      }
    }
    this.t.push(t);
  }
  clear(): void {
    this.t.length = 0;
    for (const c of this.cols) c.length = 0;
  }
  lastT(): number {
    return this.t.length ? this.t[this.t.length - 1] : NaN;
  }
}

/** Appends a value to a column, leaving out the middle of a flat stretch. */
function put(c: Column, v: number | null): void {
  const n = c.length;
  if (v !== null && n >= 2 && c[n - 1] === v && (c[n - 2] === v || c[n - 2] === undefined)) c[n - 1] = undefined;
  c.push(v);
}

const finite = (v: number | null | undefined): number | null => (v == null || !Number.isFinite(v) ? null : v);

/** The decimals that show a tick spacing exactly (0.25 → 2). */
function decimalsOf(incr: number): number {
  if (!(incr > 0)) return 0;
  const text = String(+incr.toPrecision(6));
  const dot = text.indexOf(".");
  const exact = /e/.test(text) ? Math.ceil(-Math.log10(incr)) : dot < 0 ? 0 : text.length - dot - 1;
  return Math.max(0, exact);
}

/** Y-axis labels that fit the axis's width: the decimals the tick spacing needs, k / M for
 *  large values, and powers of ten when ticks finer than 0.0001 need more than 7 characters
 *  (an arm angle that barely moves read 0.0000 at every tick with 4 decimals at most). */
function yValues(_u: uPlot, splits: number[], _axis: number, _space: number, incr: number): string[] {
  const decimals = decimalsOf(incr);
  if (decimals > 4) {
    const fixed = splits.map((v) => v.toFixed(decimals));
    if (fixed.every((l) => l.length <= 7)) return fixed;
    const top = Math.max(...splits.map(Math.abs));
    const digits = Math.min(4, Math.max(0, Math.floor(Math.log10(top || incr)) - Math.floor(Math.log10(incr))));
    return splits.map((v) => (Math.abs(v) < incr / 2 ? "0" : v.toExponential(digits)));
  }
  return splits.map((v) => {
    const a = Math.abs(v);
    if (a >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
    if (a >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
    return v.toFixed(decimals);
  });
}

/** Auto y range: the data's span with 10 % room; a flat line gets ±10 % of its value (±1
 *  around zero) instead of uPlot's 0..100, so its ticks read near the value. */
function yRange(_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax {
  if (min == null || max == null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (max - min <= 1e-12 * Math.max(1, Math.abs(max))) {
    const pad = Math.abs(max) > 0 ? Math.abs(max) * 0.1 : 1;
    return [min - pad, max + pad];
  }
  const pad = (max - min) * 0.1;
  return [min >= 0 && min - pad < 0 ? 0 : min - pad, max + pad];
}

interface PlotSpec {
  id: string;
  title: string;
  series: uPlot.Series[];
  scales?: uPlot.Scales;
  axes?: uPlot.Axis[];
  /** Values for each series (after the time) from one telemetry message. */
  sample: (m: TelemetryMsg, store: Store) => (number | null | undefined)[];
}

const PALETTE = ["#4da3ff", "#ff8c1a", "#5cd67a", "#e05cff", "#ffd84d", "#4dffe1", "#ff5c8a", "#b0b0b0"];

function line(label: string, stroke: string, extra: Partial<uPlot.Series> = {}): uPlot.Series {
  return { label, stroke, width: 1, points: { show: false }, spanGaps: false, ...extra };
}
function bound(label: string, stroke: string, scale?: string): uPlot.Series {
  return line(label, stroke, { dash: [6, 4], width: 1, ...(scale ? { scale } : {}) });
}
const norm = (v: number[] | undefined): number | null =>
  v && v.length >= 3 ? Math.hypot(v[0], v[1], v[2]) : null;

function specs(joints: number): PlotSpec[] {
  return [
    {
      id: "wrench",
      title: "wrench: |F| [N] (left), |M| [N·m] (right) against their bounds",
      series: [
        line("|F| N", "#4da3ff"),
        bound("F bound", "#4da3ff"),
        line("|M| N·m", "#ff8c1a", { scale: "torque" }),
        bound("M bound", "#ff8c1a", "torque"),
      ],
      axes: [{}, { scale: "y" }, { scale: "torque", side: 1, grid: { show: false } }],
      sample: (m) => [
        norm(m.wrench),
        m.wrench_bounds?.force,
        norm(m.wrench.slice(3)),
        m.wrench_bounds?.torque,
      ],
    },
    {
      id: "joints",
      title: "joints, normalised to their limits (±1 = limit)",
      series: Array.from({ length: joints }, (_, i) => line(`q${i + 1}`, PALETTE[i % PALETTE.length])),
      scales: { y: { auto: false, range: [-1.05, 1.05] } },
      sample: (m, store) => {
        const arm = store.arms.get(m.site);
        return m.q.map((q, i) => {
          const j = arm?.joints[i];
          if (!j || !(j.upper > j.lower)) return null;
          return (2 * (q - j.lower)) / (j.upper - j.lower) - 1;
        });
      },
    },
    {
      id: "psi",
      title: "arm angle ψ [rad]",
      series: [line("ψ", "#e05cff")],
      sample: (m) => [m.psi],
    },
    {
      id: "p",
      title: "achieved fraction p (dashed: warn below)",
      series: [line("p", "#5cd67a"), bound("warn", "#ffb347")],
      scales: { y: { auto: false, range: [0, 1.05] } },
      sample: (m) => [m.p_achieved, m.p_warn_below],
    },
    {
      id: "clearance",
      title: "obstacle clearance [m]",
      series: [line("clearance", "#4dffe1")],
      sample: (m) => [m.clearance],
    },
    {
      id: "timing",
      title: "loop timing: period error and compute [µs] (left), overruns (right)",
      series: [
        line("period error µs", "#ffd84d"),
        line("compute µs", "#4da3ff"),
        line("overruns", "#ff5c5c", { scale: "count" }),
      ],
      axes: [{}, { scale: "y" }, { scale: "count", side: 1, grid: { show: false } }],
      sample: (m) => [m.timing.period_error_us, m.timing.compute_us, m.timing.overruns],
    },
    {
      id: "rtt",
      title: "link round trip [ms]",
      series: [line("RTT ms", "#b0b0b0")],
      sample: (m) => [m.link_rtt_ms],
    },
  ];
}

/** Every y scale the plot's series use, ranged by yRange unless the spec fixes it. */
function autoScales(spec: PlotSpec): uPlot.Scales {
  const scales: uPlot.Scales = {};
  for (const s of spec.series) scales[s.scale ?? "y"] = { range: yRange };
  return scales;
}

interface LivePlot {
  spec: PlotSpec;
  plot: uPlot;
  cols: Column[];
  data: uPlot.AlignedData;
}

const AXIS_FONT = "10px system-ui, sans-serif";
const axisStyle: uPlot.Axis = {
  stroke: "#8a96a3",
  font: AXIS_FONT,
  grid: { stroke: "#2a3038", width: 1 },
  ticks: { stroke: "#2a3038", width: 1, size: 4 },
};
// Time along the bottom in a thin strip (uPlot's default 50 px left the plot area ~46 px
// tall, room for a single y tick); the y axes get a tick every 16 px or more.
const xAxis: uPlot.Axis = { ...axisStyle, size: 22, gap: 2, space: 50 };
const yAxis: uPlot.Axis = { ...axisStyle, size: 42, gap: 3, space: 16, values: yValues };

export function mountPlots(root: HTMLElement, store: Store): void {
  const holder = el("div");
  const rate = el("div", { class: "dim", id: "plot-rate" });
  root.append(el("h2", { text: "live plots (10 s)" }), rate, holder);
  const win = new Window();
  let plots: LivePlot[] = [];
  let jointCount = -1;
  let dirty = false;

  const build = (joints: number) => {
    for (const p of plots) {
      observer.unobserve(p.plot.root);
      p.plot.destroy();
    }
    holder.replaceChildren();
    win.forget();
    win.clear();
    jointCount = joints;
    const width = Math.max(root.clientWidth - 16, 300);
    plots = specs(joints).map((spec) => {
      const div = el("div", { class: "plot", id: `plot-${spec.id}` }, el("div", { class: "title", text: spec.title }));
      holder.append(div);
      const axes = (spec.axes ?? [{}, {}]).map((a, i) => ({ ...(i === 0 ? xAxis : yAxis), ...a }));
      const opts: uPlot.Options = {
        width,
        height: 118,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: false }, ...autoScales(spec), ...(spec.scales ?? {}) },
        series: [{ label: "t [s]" }, ...spec.series],
        axes,
      };
      const cols = spec.series.map(() => win.column());
      const data = [win.t, ...cols] as uPlot.AlignedData;
      const plot = new uPlot(opts, data, div);
      observer.observe(plot.root);
      return { spec, plot, cols, data };
    });
  };

  store.on("active", () => {
    win.clear();
    dirty = true;
  });

  store.on("telemetry", (site) => {
    stats.telemetry++;
    if (site !== store.activeSite) return;
    const m = store.telemetry.get(site);
    if (!m) return;
    if (m.q.length !== jointCount) build(m.q.length);
    const last = win.lastT();
    // Site time going back means a restarted site: start the window afresh. A repeated
    // time adds nothing to draw.
    if (m.t < last) win.clear();
    else if (m.t === last) return;
    win.push(m.t);
    for (const p of plots) {
      const values = p.spec.sample(m, store);
      for (let c = 0; c < p.cols.length; c++) put(p.cols[c], finite(values[c]));
    }
    dirty = true;
  });

  // Measured redraw rate, shown so the operator sees a stalled feed.
  let lastCount = 0;
  let lastTime = performance.now();
  setInterval(() => {
    const now = performance.now();
    const hz = ((stats.plotRedraws - lastCount) * 1000) / (now - lastTime);
    lastCount = stats.plotRedraws;
    lastTime = now;
    rate.textContent = `redraw ${hz.toFixed(1)} Hz · telemetry messages ${stats.telemetry}`;
  }, 1000);

  // Plots scrolled out of view are not drawn (their columns still fill).
  const visible = new Set<Element>();
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) visible.add(e.target);
      else visible.delete(e.target);
    }
  });
  // Samples come at 60 Hz; at most one redraw per frame, and none sooner than 12 ms after
  // the last (a browser that runs frames faster than 80/s gains nothing the eye reads). A
  // longer interval lost draws wherever the frame rate was irregular on a loaded machine.
  const minIntervalMs = 12;
  let lastDraw = 0;
  const frame = (now: number) => {
    requestAnimationFrame(frame);
    if (!dirty || plots.length === 0 || now - lastDraw < minIntervalMs) return;
    dirty = false;
    lastDraw = now;
    const tEnd = win.lastT();
    let drawn = 0;
    for (const p of plots) {
      if (!visible.has(p.plot.root)) continue;
      drawn++;
      p.plot.batch(() => {
        p.plot.setData(p.data, false);
        if (Number.isFinite(tEnd)) p.plot.setScale("x", { min: tEnd - WINDOW_S, max: tEnd });
      });
    }
    if (drawn) stats.plotRedraws++;
  };
  requestAnimationFrame(frame);
}
