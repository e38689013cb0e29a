// The plots' scale and tick logic as pure functions (no DOM, no uPlot), so that node can test
// them (tests/browser/plot_ticks.test.mjs transpiles this file and imports it).
//
// What they fix (issue 32, item 5): an arm angle whose span is 1e-16 rad of numerical noise
// was scaled to fill the plot (ticks 1e-17 apart, none near zero, labels like "266e-7" twice
// or clipped to ".25e-7"); counts got fractional ticks.

/** The scale of a plot axis: its data's least span to show as a span. */
export interface Floor {
  /** Spans below this are drawn flat, around their value, on a range this wide either side
   *  (in the axis's unit). */
  minSpan: number;
  /** The data are never negative (a norm, a count, a duration): the range starts at 0 when
   *  its padding would cross it. */
  nonNegative?: boolean;
}

/**
 * The y range for data between min and max. A span below floor.minSpan is noise for the
 * operator (1e-16 rad of an arm angle, a held value): it is drawn flat, on a range 2·minSpan
 * wide whose centre is the data's centre rounded to minSpan/2 — so noise around zero sits on
 * a zero tick, and the range does not crawl with the noise. A larger span gets 10 % room.
 */
export function flatRange(min: number | null, max: number | null, floor: Floor): [number, number] {
  if (min == null || max == null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min > max) [min, max] = [max, min];
  const minSpan = floor.minSpan > 0 ? floor.minSpan : 1e-9;
  const span = max - min;
  if (span < minSpan) {
    const step = minSpan / 2;
    let centre = Math.round((min + max) / 2 / step) * step;
    if (Object.is(centre, -0)) centre = 0;
    let lo = centre - minSpan;
    const hi = centre + minSpan;
    if (floor.nonNegative && min >= 0 && lo < 0) lo = 0;
    return [lo, Math.max(hi, lo + minSpan)];
  }
  const pad = span * 0.1;
  const lo = floor.nonNegative && min >= 0 && min - pad < 0 ? 0 : min - pad;
  return [lo, max + pad];
}

/** Integer tick spacings: counts (overruns) never get a tick between two integers. */
export const INTEGER_INCRS: number[] = (() => {
  const out: number[] = [];
  for (let e = 1; e <= 1e9; e *= 10) out.push(e, 2 * e, 5 * e);
  return out;
})();

/** A count's range: from 0 (or its least value) to at least 2 above it, on integers, so
 *  that integer spacings give at least two ticks. */
export function countRange(min: number | null, max: number | null): [number, number] {
  const lo = min != null && Number.isFinite(min) ? Math.min(0, Math.floor(min)) : 0;
  const hi = max != null && Number.isFinite(max) ? Math.ceil(max * 1.1) : 0;
  return [lo, Math.max(hi, lo + 2)];
}

/** The decimals that write a tick spacing exactly (0.25 → 2, 5e-7 → 7, 20 → 0). */
export function decimalsOf(incr: number): number {
  if (!(incr > 0) || !Number.isFinite(incr)) return 0;
  for (let d = 0; d <= 12; d++) {
    const scaled = incr * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) <= 1e-6 * scaled) return d;
  }
  return 12;
}

/** The characters a y label may take: the axis is sized to its widest label, but a long
 *  label would squeeze the plot, so longer ones switch to a shorter notation. */
export const MAX_LABEL_CHARS = 7;

function plain(v: number, decimals: number): string {
  const s = v.toFixed(decimals);
  // "-0.000" is zero.
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

/** Labels in the notation chosen, or null when two ticks would read the same. */
function distinct(labels: string[]): string[] | null {
  return new Set(labels).size === labels.length ? labels : null;
}

/**
 * Tick labels for the values `splits`, `incr` apart: the decimals the spacing needs (0.25 →
 * "0.25", never "0.3"); thousands and millions as k and M; when a fixed notation would need
 * more than MAX_LABEL_CHARS characters (ticks finer than 1e-4), one power of ten of the
 * engineering kind for all ticks ("250e-9", "300e-9"). Every tick's label differs from every
 * other's (decimals are added until they do), and a tick at zero (within incr/1000) reads "0".
 */
export function tickLabels(splits: number[], incr: number): string[] {
  if (splits.length === 0) return [];
  const step = incr > 0 && Number.isFinite(incr) ? incr : Math.abs((splits[1] ?? splits[0]) - splits[0]) || 1;
  const values = splits.map((v) => (Math.abs(v) < step / 1000 ? 0 : v));
  const top = Math.max(...values.map(Math.abs));
  const tryDecimals = (fmt: (d: number) => string[], from: number): string[] => {
    for (let d = from; d <= from + 4; d++) {
      const labels = distinct(fmt(d));
      if (labels) return labels;
    }
    return fmt(from + 4);
  };
  if (top >= 1e4) {
    const [div, suffix] = top >= 1e6 ? [1e6, "M"] : [1e3, "k"];
    return tryDecimals((d) => values.map((v) => (v === 0 ? "0" : `${plain(v / div, d)}${suffix}`)),
      decimalsOf(step / div));
  }
  const fixed = tryDecimals((d) => values.map((v) => plain(v, d)), decimalsOf(step));
  if (fixed.every((l) => l.length <= MAX_LABEL_CHARS)) return fixed;
  // Engineering notation with the exponent of the largest tick, so that "250e-9" and
  // "1.25e-6" never share an axis: all ticks read in the same unit.
  const exp = 3 * Math.floor(Math.log10(top || step) / 3);
  const unit = 10 ** exp;
  return tryDecimals((d) => values.map((v) => (v === 0 ? "0" : `${plain(v / unit, d)}e${exp}`)),
    decimalsOf(+(step / unit).toPrecision(6)));
}

/** A value as a share of its bound (|F| / F_max): null when either is unknown or the bound
 *  is off (null, 0 or infinite). */
export function shareOf(value: number | null | undefined, bound: number | null | undefined): number | null {
  if (value == null || bound == null || !Number.isFinite(value) || !Number.isFinite(bound) || !(bound > 0)) return null;
  return Math.abs(value) / bound;
}

/** The range of a plot of shares of bounds: 0..1.1 (the bound at 1 with room above it),
 *  widened to show a share above 1.1 whole. */
export function shareRange(max: number | null): [number, number] {
  const top = max != null && Number.isFinite(max) ? max : 0;
  return [0, Math.max(1.1, top * 1.05)];
}

/** |F| and |M| of a wrench [fx, fy, fz, mx, my, mz] as shares of the force and torque bounds
 *  (null where a bound is off or the wrench is short): what the wrench plot draws. */
export function wrenchShares(
  wrench: number[] | null | undefined,
  bounds: { force: number | null; torque: number | null },
): { force: number | null; torque: number | null } {
  const norm = (at: number) =>
    wrench && wrench.length >= at + 3 ? Math.hypot(wrench[at], wrench[at + 1], wrench[at + 2]) : null;
  return { force: shareOf(norm(0), bounds.force), torque: shareOf(norm(3), bounds.torque) };
}
