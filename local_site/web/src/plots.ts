// Live plots of the active site's telemetry (uPlot): a rolling 10 s window kept in fixed-size
// ring buffers, redrawn at most once per animation frame and only when a sample arrived.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { el, stats, type Store } from "./store";
import type { TelemetryMsg } from "./protocol";

const WINDOW_S = 10;
// 10 s at the highest rate a client may subscribe to (60 Hz), with a margin.
const CAPACITY = 10 * 64;

/** Columns of samples against time in preallocated typed arrays; NaN stands for "no value". */
class Ring {
  readonly t = new Float64Array(CAPACITY);
  readonly cols: Float64Array[];
  private head = 0; // next write
  len = 0;
  constructor(ncols: number) {
    this.cols = Array.from({ length: ncols }, () => new Float64Array(CAPACITY));
  }
  push(t: number, values: (number | null | undefined)[]): void {
    this.t[this.head] = t;
    for (let c = 0; c < this.cols.length; c++) {
      const v = values[c];
      this.cols[c][this.head] = v == null || !Number.isFinite(v) ? NaN : v;
    }
    this.head = (this.head + 1) % CAPACITY;
    this.len = Math.min(this.len + 1, CAPACITY);
  }
  clear(): void {
    this.head = 0;
    this.len = 0;
  }
  lastT(): number {
    return this.len ? this.t[(this.head - 1 + CAPACITY) % CAPACITY] : NaN;
  }
  /** Chronological copies in the shape uPlot takes (null for gaps). */
  data(): uPlot.AlignedData {
    const start = (this.head - this.len + CAPACITY) % CAPACITY;
    const xs = new Array<number>(this.len);
    const ys = this.cols.map(() => new Array<number | null>(this.len));
    for (let i = 0; i < this.len; i++) {
      const k = (start + i) % CAPACITY;
      xs[i] = this.t[k];
      for (let c = 0; c < this.cols.length; c++) {
        const v = this.cols[c][k];
        ys[c][i] = Number.isNaN(v) ? null : v;
      }
    }
    return [xs, ...ys] as uPlot.AlignedData;
  }
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
  return { label, stroke, width: 1.5, points: { show: false }, spanGaps: false, ...extra };
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

interface LivePlot {
  spec: PlotSpec;
  plot: uPlot;
  ring: Ring;
}

export function mountPlots(root: HTMLElement, store: Store): void {
  const holder = el("div");
  const rate = el("div", { class: "dim", id: "plot-rate" });
  root.append(el("h2", { text: "live plots (10 s)" }), rate, holder);
  let plots: LivePlot[] = [];
  let jointCount = -1;
  let dirty = false;

  const axisStyle: uPlot.Axis = { stroke: "#8a96a3", grid: { stroke: "#2a3038" }, ticks: { stroke: "#2a3038" } };
  const build = (joints: number) => {
    for (const p of plots) {
      observer.unobserve(p.plot.root);
      p.plot.destroy();
    }
    holder.replaceChildren();
    jointCount = joints;
    const width = Math.max(root.clientWidth - 16, 300);
    plots = specs(joints).map((spec) => {
      const div = el("div", { class: "plot", id: `plot-${spec.id}` }, el("div", { class: "title", text: spec.title }));
      holder.append(div);
      const axes = (spec.axes ?? [{}, {}]).map((a) => ({ ...axisStyle, ...a }));
      const opts: uPlot.Options = {
        width,
        height: 96,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: false }, ...(spec.scales ?? {}) },
        series: [{ label: "t [s]" }, ...spec.series],
        axes,
      };
      const ring = new Ring(spec.series.length);
      const plot = new uPlot(opts, ring.data(), div);
      observer.observe(plot.root);
      return { spec, ring, plot };
    });
  };

  const reset = () => {
    for (const p of plots) p.ring.clear();
    dirty = true;
  };
  store.on("active", reset);

  store.on("telemetry", (site) => {
    stats.telemetry++;
    if (site !== store.activeSite) return;
    const m = store.telemetry.get(site);
    if (!m) return;
    if (m.q.length !== jointCount) build(m.q.length);
    for (const p of plots) {
      // Site time going back means a restarted site: start the window afresh.
      if (m.t < p.ring.lastT()) p.ring.clear();
      p.ring.push(m.t, p.spec.sample(m, store));
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

  // Plots scrolled out of view are not drawn (their buffers still fill).
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
    let drawn = 0;
    for (const p of plots) {
      if (!visible.has(p.plot.root)) continue;
      drawn++;
      const tEnd = p.ring.lastT();
      p.plot.batch(() => {
        p.plot.setData(p.ring.data(), false);
        if (Number.isFinite(tEnd)) p.plot.setScale("x", { min: tEnd - WINDOW_S, max: tEnd });
      });
    }
    if (drawn) stats.plotRedraws++;
  };
  requestAnimationFrame(frame);
}
