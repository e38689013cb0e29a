// Numeric readouts of what the running task is bounded by, for the active site: |F| and |M|
// against the force and torque bounds, the deviation from the reference (translation,
// rotation, arm angle) against theirs, the auxiliary angle (the door) against its range, the
// joint nearest its limit against the task's joint-limit margin, and the obstacle clearance
// against the proximity bounds. Each row: the value, its bound, a bar and the share of the
// bound used (amber from 80 %, red beyond the bound), and the value's age; a row whose
// telemetry is older than 1 s (or three periods of a slower stream) goes grey with "no data
// for N s". The age is measured from the message's arrival (performance.now()); the site's
// own sample time (sample_unix_ms) is the row's tooltip.
//
// Written four times a second, not per message: numbers that change 60 times a second
// cannot be read, and every text change costs the page a layout and a raster.
import "./readouts.css";
import { el, type Store } from "./store";
import type { TelemetryMsg } from "./protocol";
import {
  ageLabel, ageShort, boundShare, fmt, levelOf, nearestJointLimit, rangeShare,
  type AuxMsg, type BoundsMsg, type DeviationMsg, type Level,
} from "./readout_values";

/** Telemetry with the fields the back end is adding (PROTOCOL.md), each optional. */
export type BoundedTelemetry = TelemetryMsg & {
  sample_unix_ms?: number | null;
  deviation?: DeviationMsg | null;
  bounds?: BoundsMsg | null;
  aux?: AuxMsg[] | null;
};

/** One row as computed from a message: what it shows and how near its bound it is. */
interface RowValue {
  /** Replaces the row's label (the joint's name). */
  name?: string;
  value: string;
  bound: string;
  share: number | null;
  /** Replaces the share's percentage (e.g. "no bound"). */
  note?: string;
  title?: string;
}

interface RowSpec {
  key: string;
  label: string;
  /** null: the row is hidden (e.g. no clearance in this scene). */
  compute: (m: BoundedTelemetry, store: Store) => RowValue | null;
}

const norm3 = (v: number[] | undefined, at = 0): number | null =>
  v && v.length >= at + 3 ? Math.hypot(v[at], v[at + 1], v[at + 2]) : null;
const deg = (rad: number | null | undefined) => (rad == null || !Number.isFinite(rad) ? "" : ` (${(rad * 180 / Math.PI).toFixed(1)}°)`);

/** A value against its bound, written with `decimals` places (a bound with the digits it has). */
function against(value: number | null | undefined, bound: number | null | undefined, unit: string, decimals: number): RowValue {
  const share = boundShare(value, bound);
  return {
    value: value == null || !Number.isFinite(value) ? "—" : `${value.toFixed(decimals)} ${unit}`,
    bound: bound == null ? "no bound" : `${fmt(bound, 4)} ${unit}`,
    share,
    note: bound == null ? "off" : undefined,
  };
}

const ROWS: RowSpec[] = [
  {
    key: "force", label: "force |F|",
    compute: (m) => against(norm3(m.wrench), m.wrench_bounds?.force ?? m.bounds?.force ?? null, "N", 1),
  },
  {
    key: "torque", label: "torque |M|",
    compute: (m) => against(norm3(m.wrench, 3), m.wrench_bounds?.torque ?? m.bounds?.torque ?? null, "N·m", 2),
  },
  {
    key: "translation", label: "Δ position",
    compute: (m) => {
      const r = against(m.deviation?.translation, m.bounds?.translation, "m", 3);
      if (m.deviation?.translation != null) r.value = `${(m.deviation.translation * 1000).toFixed(1)} mm`;
      if (m.bounds?.translation != null) r.bound = `${(m.bounds.translation * 1000).toFixed(1)} mm`;
      if (!m.deviation) r.title = "no reference pose: the site is not running a task";
      return r;
    },
  },
  {
    key: "rotation", label: "Δ rotation",
    compute: (m) => {
      const r = against(m.deviation?.rotation, m.bounds?.rotation, "rad", 3);
      if (r.title === undefined) r.title = `${r.value}${deg(m.deviation?.rotation)}`;
      return r;
    },
  },
  {
    key: "arm_angle", label: "Δ arm angle",
    compute: (m) => {
      const r = against(m.deviation?.arm_angle, m.bounds?.arm_angle, "rad", 3);
      if (m.deviation && m.deviation.arm_angle == null) r.title = "the arm angle is not defined here (elbow on the shoulder–wrist line)";
      return r;
    },
  },
  {
    key: "joint_margin", label: "joint limit",
    compute: (m, store) => {
      const arm = store.arms.get(m.site);
      if (!arm) return { value: "—", bound: "—", share: null, note: "no arm", title: "the ground has no model of this arm" };
      const n = nearestJointLimit(m.q, arm.joints, m.bounds?.joint_margin);
      if (!n) return { value: "—", bound: "—", share: null };
      return {
        name: `j${n.index + 1} to ${n.limit} limit`,
        value: `${n.distance.toFixed(3)} rad`,
        bound: n.margin == null ? "no margin" : `≥ ${fmt(n.margin, 3)} rad`,
        share: n.share,
        note: n.margin == null ? "off" : undefined,
        title: `${n.name}: the distance of each joint to its nearer limit (the arm's limits); the site stops a joint within the task's joint_limit_margin` +
          (n.share != null ? `; shown as margin / distance` : ""),
      };
    },
  },
  {
    key: "clearance", label: "clearance",
    compute: (m) => {
      const lo = m.bounds?.min_proximity ?? null;
      const hi = m.bounds?.max_proximity ?? null;
      if (m.clearance == null && lo == null && hi == null) return null;
      const c = m.clearance;
      // A minimum distance is used up as the clearance shrinks (min / clearance), a maximum
      // as it grows (clearance / max): the larger of the two.
      const shares = [
        lo != null && c != null ? (c > 0 ? lo / c : Infinity) : null,
        hi != null && c != null ? boundShare(c, hi) : null,
      ].filter((s): s is number => s != null);
      return {
        value: c == null ? "—" : `${(c * 1000).toFixed(0)} mm`,
        bound: [lo != null ? `≥ ${(lo * 1000).toFixed(0)} mm` : "", hi != null ? `≤ ${(hi * 1000).toFixed(0)} mm` : ""]
          .filter(Boolean).join(", ") || "no bound",
        share: shares.length ? Math.max(...shares) : null,
        note: lo == null && hi == null ? "off" : undefined,
      };
    },
  },
];

/** One readout per auxiliary value (the door), against its range. */
function auxRow(a: AuxMsg): RowValue {
  const share = rangeShare(a.value, a.min, a.max);
  const unit = a.unit || "";
  const isRad = unit === "rad";
  return {
    value: a.value == null ? "—" : `${fmt(a.value, 3)} ${unit}`,
    bound: a.min == null && a.max == null ? "no range" : `${fmt(a.min, 2)} … ${fmt(a.max, 2)}`,
    share,
    note: a.min == null && a.max == null ? "—" : undefined,
    title: `${a.name}${isRad && a.value != null ? ` ${deg(a.value).trim()}` : ""}: where the value sits in its range, ` +
      "0 % at the minimum, 100 % at the maximum",
  };
}

interface RowView {
  tr: HTMLTableRowElement;
  name: HTMLElement;
  label: string;
  value: HTMLElement;
  bound: HTMLElement;
  bar: HTMLElement;
  pct: HTMLElement;
  age: HTMLElement;
}

function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

export function mountReadouts(root: HTMLElement, store: Store): void {
  const heading = el("h2", { text: "readouts" });
  const note = el("div", { class: "stale-note", id: "readouts-age" });
  const body = el("tbody");
  const table = el("table", { class: "readouts" },
    el("colgroup", {}, ...["name", "value", "bound", "bar", "pct", "age"].map((c) => el("col", { class: c }))),
    el("thead", {}, el("tr", {},
      el("th", { text: "bounded by" }), el("th", { text: "value", class: "value" }), el("th", { text: "bound" }),
      el("th", { text: "of the bound", colspan: "2" }), el("th", { text: "age", class: "age" }))),
    body);
  root.append(heading, note, table);
  root.classList.add("readouts-panel");

  const views = new Map<string, RowView>();
  const view = (key: string, label: string): RowView => {
    let v = views.get(key);
    if (v) return v;
    const value = el("td", { class: "value" });
    const bound = el("td", { class: "bound" });
    const fill = el("div", { class: "fill" });
    const bar = el("td", { class: "bar" }, el("div", { class: "track" }, fill, el("div", { class: "mark" })));
    const pct = el("td", { class: "pct" });
    const age = el("td", { class: "age" });
    const name = el("td", { class: "name", text: label });
    const tr = el("tr", { class: "readout none", "data-key": key }, name, value, bound, bar, pct, age);
    body.append(tr);
    v = { tr, name, label, value, bound, bar: fill, pct, age };
    views.set(key, v);
    return v;
  };
  for (const r of ROWS) view(r.key, r.label);

  const render = () => {
    const site = store.activeSite;
    const m = store.telemetry.get(site) as BoundedTelemetry | undefined;
    // The store keeps every site's arrival times and the one staleness rule.
    const ageMs = store.telemetryAge(site);
    const stale = !store.live(site);
    setText(heading, `readouts${site ? `: ${site}` : ""}${m?.task?.name ? ` · ${m.task.name}` : ""}`);
    root.classList.toggle("stale", stale);
    setText(note, stale ? `${site || "no site"}: ${ageLabel(ageMs)}` : "");
    const sampled = m?.sample_unix_ms != null
      ? `sampled ${new Date(m.sample_unix_ms).toISOString().replace("T", " ").replace("Z", " UTC")} (site clock)`
      : "the site sends no sample time";
    const rows: [string, string, RowValue | null][] = [];
    for (const r of ROWS) rows.push([r.key, r.label, m ? r.compute(m, store) : null]);
    for (const a of m?.aux ?? []) rows.push([`aux:${a.name}`, a.name, auxRow(a)]);
    const present = new Set(rows.map(([k]) => k));
    for (const [key, v] of views) if (!present.has(key)) v.tr.hidden = true;
    for (const [key, label, r] of rows) {
      const v = view(key, label);
      const optional = key === "clearance";
      v.tr.hidden = optional && r === null;
      const level: Level = r ? levelOf(r.share) : "none";
      const cls = `readout ${level}${stale ? " aged" : ""}`;
      if (v.tr.className !== cls) v.tr.className = cls;
      setText(v.name, r?.name ?? v.label);
      setText(v.value, r?.value ?? "—");
      setText(v.bound, r?.bound ?? "—");
      const pct = r?.share == null ? r?.note ?? "—" : !Number.isFinite(r.share) ? "over" : `${Math.round(r.share * 100)} %`;
      setText(v.pct, pct);
      const width = r?.share == null ? "0%" : `${Math.min(100, Math.max(0, Math.round(r.share * 100)))}%`;
      if (v.bar.style.width !== width) v.bar.style.width = width;
      setText(v.age, stale ? ageLabel(ageMs) : ageShort(ageMs));
      const title = [r?.title, sampled].filter(Boolean).join(" · ");
      if (v.tr.title !== title) v.tr.title = title;
    }
  };
  store.on("active", render);
  setInterval(render, 250);
  render();
}
