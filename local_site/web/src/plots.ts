// Live plots of the active site's telemetry (uPlot): a rolling 10 s window, redrawn at most
// once per animation frame and only when a sample arrived, and only the plots in view.
//
// Scales and ticks (plot_scale.ts): a span below a plot's floor (the arm angle's 1e-16 rad of
// noise) is drawn flat around its value on a readable range, labels never repeat and the
// y axes are as wide as their widest label (no label clipped at the edge), counts get integer
// ticks, and force and torque are drawn as shares of their bounds (see the wrench plot).
//
// The canvases are CPU-backed (willReadFrequently): see cpuCanvases below. The panel greys
// with "no data for N s" when the active site's telemetry is older than 1 s.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import "./readouts.css";
import { el, stats, type Store } from "./store";
import type { TelemetryMsg } from "./protocol";
import {
  countRange, flatRange, INTEGER_INCRS, shareRange, tickLabels, wrenchShares, type Floor,
} from "./plot_scale";
import { ageLabel, type BoundsMsg } from "./readout_values";

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

/** Telemetry with the fields the back end is adding (PROTOCOL.md), each optional. */
type Telemetry = TelemetryMsg & { bounds?: BoundsMsg | null };

interface PlotSpec {
  id: string;
  title: string;
  series: uPlot.Series[];
  /** Per y scale: its floor (flat below it), or "count" (integers) or "share" (of a bound:
   *  0..1.1); the scales a spec fixes in `scales` are left as they are. */
  ranges: Record<string, Floor | "count" | "share">;
  scales?: uPlot.Scales;
  axes?: uPlot.Axis[];
  /** Values for each series (after the time) from one telemetry message. */
  sample: (m: Telemetry, store: Store) => (number | null | undefined)[];
  /** Called with the latest message at most 4 times a second: legend text that depends on
   *  the task (the bounds' values). */
  legend?: (m: Telemetry) => (string | null)[];
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

/** The force and torque bounds of the running task, from wrench_bounds or bounds. */
function wrenchBounds(m: Telemetry): { force: number | null; torque: number | null } {
  return {
    force: m.wrench_bounds?.force ?? m.bounds?.force ?? null,
    torque: m.wrench_bounds?.torque ?? m.bounds?.torque ?? null,
  };
}

const fmtBound = (v: number | null, unit: string): string =>
  v == null ? "no bound" : `${+v.toPrecision(4)} ${unit}`;

function specs(joints: number): PlotSpec[] {
  return [
    {
      // Force and torque as shares of their bounds on one 0..1.1 axis, the bound at 1, and
      // not in N and N·m on two axes: there the two auto-ranged axes put the 150 N and the
      // 60 N·m bounds on the same height, one dashed line meaning two numbers, and which of
      // the two is nearer its stop could not be read. As shares, one line is both bounds by
      // construction, the nearer quantity is the higher line, the range is fixed (no
      // rescaling as the wrench changes) and it costs one canvas, not two (the page draws
      // on the CPU on machines without a GPU). The absolute values and the bounds are in the
      // legend and in the readouts beside the 3-D view. A quantity whose bound is off has
      // no share: its line is left out and its legend says so.
      id: "wrench",
      title: "force and torque as shares of their bounds (1 = the bound: the site stops above it)",
      series: [
        line("|F| / F max", "#4da3ff", { scale: "share" }),
        line("|M| / M max", "#ff8c1a", { scale: "share" }),
        bound("bound", "#ff5c5c", "share"),
      ],
      ranges: { share: "share" },
      axes: [{}, { scale: "share" }],
      sample: (m) => {
        const s = wrenchShares(m.wrench, wrenchBounds(m));
        return [s.force, s.torque, 1];
      },
      legend: (m) => {
        const b = wrenchBounds(m);
        const f = norm(m.wrench);
        const t = norm(m.wrench?.slice(3));
        return [
          `|F| ${f == null ? "—" : f.toFixed(1)} N / ${fmtBound(b.force, "N")}`,
          `|M| ${t == null ? "—" : t.toFixed(2)} N·m / ${fmtBound(b.torque, "N·m")}`,
          null,
        ];
      },
    },
    {
      id: "joints",
      title: "joints, normalised to their limits (±1 = limit)",
      series: Array.from({ length: joints }, (_, i) => line(`q${i + 1}`, PALETTE[i % PALETTE.length])),
      ranges: {},
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
      // The arm angle as the site reports it: 1e-16 rad of noise on a still arm is drawn flat
      // on ±0.01 rad (0.6°), finer than anything an operator acts on, with a tick at zero.
      id: "psi",
      title: "arm angle ψ [rad]",
      series: [line("ψ", "#e05cff")],
      ranges: { y: { minSpan: 0.01 } },
      sample: (m) => [m.psi],
    },
    {
      id: "p",
      title: "achieved fraction p (dashed: warn below)",
      series: [line("p", "#5cd67a"), bound("warn", "#ffb347")],
      ranges: {},
      scales: { y: { auto: false, range: [0, 1.05] } },
      sample: (m) => [m.p_achieved, m.p_warn_below],
    },
    {
      id: "clearance",
      title: "obstacle clearance [m]",
      series: [line("clearance", "#4dffe1")],
      ranges: { y: { minSpan: 0.005 } },
      sample: (m) => [m.clearance],
    },
    {
      id: "timing",
      title: "loop timing: period error and compute [µs] (left), overruns (right, a count)",
      series: [
        line("period error µs", "#ffd84d"),
        line("compute µs", "#4da3ff"),
        line("overruns", "#ff5c5c", { scale: "count" }),
      ],
      ranges: { y: { minSpan: 10 }, count: "count" },
      axes: [{}, { scale: "y" }, { scale: "count", side: 1, grid: { show: false }, incrs: INTEGER_INCRS }],
      sample: (m) => [m.timing.period_error_us, m.timing.compute_us, m.timing.overruns],
    },
    {
      id: "rtt",
      title: "link round trip [ms]",
      series: [line("RTT ms", "#b0b0b0")],
      ranges: { y: { minSpan: 0.5, nonNegative: true } },
      sample: (m) => [m.link_rtt_ms],
    },
  ];
}

/** Every y scale the plot's series use, ranged by its spec (a floor of 1e-9 unless given). */
function autoScales(spec: PlotSpec): uPlot.Scales {
  const scales: uPlot.Scales = {};
  for (const s of spec.series) {
    const key = s.scale ?? "y";
    const how = spec.ranges[key] ?? { minSpan: 1e-9 };
    scales[key] = {
      range:
        how === "count"
          ? (_u, min, max) => countRange(min, max)
          : how === "share"
            ? (_u, _min, max) => shareRange(max)
            : (_u, min, max) => flatRange(min, max, how),
    };
  }
  return scales;
}

interface LivePlot {
  spec: PlotSpec;
  plot: uPlot;
  cols: Column[];
  data: uPlot.AlignedData;
  /** The legend's label elements, one per series. */
  labels: HTMLElement[];
}

const AXIS_FONT = "10px system-ui, sans-serif";
const axisStyle: uPlot.Axis = {
  stroke: "#8a96a3",
  font: AXIS_FONT,
  grid: { stroke: "#2a3038", width: 1 },
  ticks: { stroke: "#2a3038", width: 1, size: 4 },
};

/** Measures label widths in the axis font (one detached canvas, never drawn). */
let measurer: CanvasRenderingContext2D | null = null;
function textWidth(text: string): number {
  measurer ??= document.createElement("canvas").getContext("2d");
  if (!measurer) return text.length * 6;
  measurer.font = AXIS_FONT;
  return measurer.measureText(text).width;
}
/**
 * A y axis as wide as its widest label, ticks and gap, so that no label is clipped at the
 * plot's edge (a fixed 42 px cut "-1.25e-7" to ".25e-7"). The width only grows, from a
 * least width that aligns the plots' left edges: uPlot sizes its axes in at most three
 * passes, and a width that went up and down between them left the plot laid out for one
 * width and the labels drawn for another (the minus signs of the joints' plot cut off).
 */
function ySize(least: number): uPlot.Axis.Size {
  let width = least;
  return (_u, values) => {
    if (values && values.length) {
      const widest = Math.max(...values.map((v) => textWidth(String(v ?? ""))));
      width = Math.max(width, Math.ceil(widest) + 4 + 3 + 4);
    }
    return width;
  };
}
const labelsOf = (_u: uPlot, splits: number[], _axis: number, _space: number, incr: number): string[] =>
  tickLabels(splits, incr);
// Time along the bottom in a thin strip (uPlot's default 50 px left the plot area ~46 px
// tall, room for a single y tick); the y axes get a tick every 16 px or more.
const xAxis: uPlot.Axis = { ...axisStyle, size: 22, gap: 2, space: 50, values: labelsOf };
const yAxis = (least: number): uPlot.Axis => ({ ...axisStyle, size: ySize(least), gap: 3, space: 16, values: labelsOf });

/**
 * Makes the 2-D contexts created while `make` runs CPU-backed (willReadFrequently): Chromium
 * never GPU-accelerates such a canvas. A GPU-accelerated canvas costs nothing on a GPU, but
 * where Chromium composites with an emulated GPU (SwiftShader forced, or trusted for want
 * of a GPU) every path of every redraw is rasterised by the emulator in the GPU process,
 * which then holds every frame of the page: with SwiftShader forced, two 1 kHz sites and
 * teleoperation, the plots redrew at 6–11 Hz with accelerated canvases and at 13 with these
 * (tests/browser/render-rate.sh; the rest of the way came from giving them layers of their
 * own, readouts.css, and from the 3-D view's budget). On the CPU a redraw of one of these
 * small plots costs about a millisecond, so they are CPU-backed everywhere.
 */
export function cpuCanvases<T>(make: () => T): T {
  const proto = HTMLCanvasElement.prototype;
  const original = proto.getContext;
  proto.getContext = function (this: HTMLCanvasElement, kind: string, options?: unknown) {
    const opts = kind === "2d" ? { ...(options as object | undefined), willReadFrequently: true } : options;
    return original.call(this, kind, opts as CanvasRenderingContext2DSettings);
  } as typeof proto.getContext;
  try {
    return make();
  } finally {
    proto.getContext = original;
  }
}

export function mountPlots(root: HTMLElement, store: Store): void {
  const holder = el("div");
  const rate = el("div", { class: "dim", id: "plot-rate" });
  const age = el("div", { class: "stale-note", id: "plots-age" });
  root.append(el("h2", { text: "live plots (10 s)" }), age, rate, holder);
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
      // A size function per axis: each keeps its own width.
      const axes = (spec.axes ?? [{}, {}]).map((a, i) =>
        ({ ...(i === 0 ? xAxis : yAxis(a.side === 1 ? 20 : 34)), ...a }));
      // Labels as elements, so the legend can carry the bounds' values as they change.
      const labels = spec.series.map((s) => el("span", { text: String(s.label ?? "") }));
      const opts: uPlot.Options = {
        width,
        height: 118,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: false }, ...autoScales(spec), ...(spec.scales ?? {}) },
        series: [{ label: "t [s]" }, ...spec.series.map((s, i) => ({ ...s, label: labels[i] as unknown as string }))],
        axes,
      };
      const cols = spec.series.map(() => win.column());
      const data = [win.t, ...cols] as uPlot.AlignedData;
      const plot = cpuCanvases(() => new uPlot(opts, data, div));
      observer.observe(plot.root);
      return { spec, plot, cols, data, labels };
    });
  };

  store.on("active", () => {
    win.clear();
    dirty = true;
  });

  store.on("telemetry", (site) => {
    stats.telemetry++;
    if (site !== store.activeSite) return;
    const m = store.telemetry.get(site) as Telemetry | undefined;
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

  // Measured redraw rate, shown so the operator sees a stalled feed; the legends' bounds and
  // the panel's age four times a second.
  let lastCount = 0;
  let lastTime = performance.now();
  let tick = 0;
  setInterval(() => {
    const now = performance.now();
    const m = store.telemetry.get(store.activeSite) as Telemetry | undefined;
    for (const p of plots) {
      if (!p.spec.legend || !m) continue;
      p.spec.legend(m).forEach((text, i) => {
        if (text !== null && p.labels[i] && p.labels[i].textContent !== text) p.labels[i].textContent = text;
      });
    }
    const ageMs = store.telemetryAge(store.activeSite);
    const stale = !store.live(store.activeSite);
    root.classList.toggle("stale", stale);
    const note = stale ? `${store.activeSite || "no site"}: ${ageLabel(ageMs)}` : "";
    if (age.textContent !== note) age.textContent = note;
    if (m?.sample_unix_ms != null) age.title = `sample taken ${new Date(m.sample_unix_ms).toISOString()} (site clock)`;
    if (++tick % 4) return;
    const hz = ((stats.plotRedraws - lastCount) * 1000) / (now - lastTime);
    lastCount = stats.plotRedraws;
    lastTime = now;
    rate.textContent = `redraw ${hz.toFixed(1)} Hz · telemetry messages ${stats.telemetry}`;
  }, 250);

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
