// What the readouts show, as pure functions (no DOM): a value against its bound, the nearest
// joint limit, the age of a value. tests/browser/plot_ticks.test.mjs imports this file too.

/** telemetry.bounds: the running task's bounds (PROTOCOL.md); a bound that is off is null. */
export interface BoundsMsg {
  force: number | null;
  torque: number | null;
  translation: number | null;
  rotation: number | null;
  arm_angle: number | null;
  /** Per joint [rad]: the site stops a joint this near a limit; null when off. */
  joint_margin: number[] | null;
  min_proximity: number | null;
  max_proximity: number | null;
  max_consecutive_overruns?: number;
}

/** telemetry.deviation: the MOTION pose's distance from the reference pose (RUNNING). */
export interface DeviationMsg {
  translation: number;
  rotation: number;
  arm_angle: number | null;
}

/** One auxiliary value of the site's scene (the door's hinge angle). */
export interface AuxMsg {
  name: string;
  value: number | null;
  unit: string;
  min: number | null;
  max: number | null;
}

/** Telemetry older than this is stale: 1 s, or three periods of a slower stream. */
export function staleAfterMs(rateHz?: number | null): number {
  return rateHz && rateHz > 0 ? Math.max(1000, 3000 / rateHz) : 1000;
}

/** "no data for 2.3 s" (minutes and hours beyond), "no data yet" when none came. */
export function ageLabel(ms: number): string {
  if (!Number.isFinite(ms)) return "no data yet";
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `no data for ${s < 10 ? s.toFixed(1) : s.toFixed(0)} s`;
  if (s < 3600) return `no data for ${Math.floor(s / 60)} min`;
  return `no data for ${(s / 3600).toFixed(1)} h`;
}

/** A fresh value's age, short: "0.03 s". */
export function ageShort(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const s = Math.max(0, ms) / 1000;
  return s < 1 ? `${s.toFixed(2)} s` : `${s.toFixed(1)} s`;
}

export type Level = "ok" | "near" | "over" | "none";

/** How a share of a bound reads: over above 1, near from 0.8 (80 %), none without a share. */
export function levelOf(share: number | null): Level {
  if (share == null || Number.isNaN(share)) return "none";
  if (share > 1) return "over";
  if (share >= 0.8) return "near";
  return "ok";
}

/** |value| / bound; null when the bound is off (null, ≤ 0, infinite) or the value unknown. */
export function boundShare(value: number | null | undefined, bound: number | null | undefined): number | null {
  if (value == null || bound == null || !Number.isFinite(value) || !Number.isFinite(bound) || !(bound > 0)) return null;
  return Math.abs(value) / bound;
}

/**
 * Where a value sits in its range [min, max], 0 at min and 1 at max (the door's angle from
 * closed to fully open): outside the range it is over whichever end it passed (returned as
 * 1 + how far past, in shares of the range), so levelOf reads it as over. With one end only,
 * the share of that end (value / max for a maximum); null without either.
 */
export function rangeShare(value: number | null | undefined, min: number | null, max: number | null): number | null {
  if (value == null || !Number.isFinite(value)) return null;
  const lo = min != null && Number.isFinite(min) ? min : null;
  const hi = max != null && Number.isFinite(max) ? max : null;
  if (lo != null && hi != null && hi > lo) {
    if (value < lo) return 1 + (lo - value) / (hi - lo);
    return (value - lo) / (hi - lo);
  }
  if (hi != null && hi > 0) return value / hi;
  if (lo != null && lo < 0) return value / lo;
  return null;
}

export interface JointLimit {
  name: string;
  lower: number;
  upper: number;
}

/** The joint nearest a limit (by how much of its margin it uses, when margins are known). */
export interface NearestLimit {
  index: number;
  name: string;
  /** Distance to the nearer limit [rad]; negative beyond it. */
  distance: number;
  limit: "lower" | "upper";
  /** The task's joint_limit_margin for the joint [rad], or null when off. */
  margin: number | null;
  /** margin / distance: 1 at the margin (where the site stops), above 1 within it. */
  share: number | null;
}

/**
 * Every joint's distance to its nearer limit, from the arm message's limits, and the one
 * nearest to stopping the arm: the largest margin / distance where the task sets margins,
 * else the smallest distance.
 */
export function nearestJointLimit(q: number[], joints: JointLimit[], margins: number[] | null | undefined): NearestLimit | null {
  let best: NearestLimit | null = null;
  const rank = (n: NearestLimit) => (n.share != null ? n.share : -n.distance);
  for (let i = 0; i < Math.min(q.length, joints.length); i++) {
    const j = joints[i];
    if (!Number.isFinite(q[i]) || !(j.upper > j.lower)) continue;
    const toLower = q[i] - j.lower;
    const toUpper = j.upper - q[i];
    const distance = Math.min(toLower, toUpper);
    const m = margins && Number.isFinite(margins[i]) && margins[i] > 0 ? margins[i] : null;
    const share = m == null ? null : distance > 0 ? m / distance : Infinity;
    const n: NearestLimit = {
      index: i, name: j.name || `j${i + 1}`, distance, limit: toLower <= toUpper ? "lower" : "upper", margin: m, share,
    };
    // Shares rank above plain distances: a joint with a margin is what stops the arm.
    if (!best || (n.share != null) > (best.share != null) ||
        ((n.share != null) === (best.share != null) && rank(n) > rank(best))) best = n;
  }
  return best;
}

/** A number with the significant digits a readout needs. */
export function fmt(v: number | null | undefined, digits = 3): string {
  if (v == null || !Number.isFinite(v)) return "—";
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1000) return v.toFixed(0);
  if (a < 1e-3) return v.toExponential(1);
  return String(+v.toPrecision(digits));
}
