// The console's plot scales and tick labels, readout values, rendering budget and the
// AprilTag's texels of the 3-D view as pure functions, tested with node alone: the TypeScript
// sources (local_site/web/src/plot_scale.ts, readout_values.ts, render_budget.ts,
// tag_texture.ts) are transpiled here with the front end's own
// TypeScript (local_site/web/node_modules: run deploy/build-web.sh or npm ci there first).
//
// Issue 32, item 5: the arm-angle plot had no ticks near zero and its 1e-16 rad of noise
// filled it; labels were clipped or repeated (".25e-7", "266e-7" twice); the 150 N and 60 N·m
// bounds fell on one line; overruns got fractional ticks.
//
// Environment: TETHER_PLOT_MODULES, a directory holding other plot_scale.ts and
// readout_values.ts to test instead (the check that these tests fail on the code before).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const web = path.resolve(here, "../../local_site/web");
const require = createRequire(path.join(web, "package.json"));
const ts = require("typescript");
const srcDir = process.env.TETHER_PLOT_MODULES ?? path.join(web, "src");
const out = fs.mkdtempSync(path.join(os.tmpdir(), "tether-plot-ticks-"));
process.on("exit", () => fs.rmSync(out, { recursive: true, force: true }));

/** Transpiles one source file (no imports of its own) and imports it. */
async function load(name) {
  const text = fs.readFileSync(path.join(srcDir, name), "utf8");
  const js = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020 },
  }).outputText;
  const file = path.join(out, name.replace(/\.ts$/, ".mjs"));
  fs.writeFileSync(file, js);
  return import(pathToFileURL(file).href);
}
const scale = await load("plot_scale.ts");
const values = await load("readout_values.ts");
const budget = fs.existsSync(path.join(srcDir, "render_budget.ts")) ? await load("render_budget.ts") : null;
const tag = fs.existsSync(path.join(srcDir, "tag_texture.ts")) ? await load("tag_texture.ts") : null;

/** uPlot's ticks for a range and an increment: multiples of incr from the range's start. */
function ticks(lo, hi, incr) {
  const out = [];
  for (let v = Math.ceil(lo / incr - 1e-9) * incr; v <= hi + incr * 1e-9; v += incr) out.push(+v.toPrecision(12));
  return out;
}

test("the arm angle's 1e-16 rad of noise is drawn flat, on a range with a tick at zero", () => {
  // ψ of a still arm as the site reports it: numerical noise around zero.
  const noise = [3.78e-17, 1.29e-17, -7.17e-18, 1.21e-17];
  const [lo, hi] = scale.flatRange(Math.min(...noise), Math.max(...noise), { minSpan: 0.01 });
  // The range is readable (at least ±5 mrad), holds the noise and has zero inside, not at an
  // edge: the noise draws as a flat line on the zero tick.
  assert.ok(hi - lo >= 0.01, `range ${lo}..${hi} is ${hi - lo} rad wide`);
  assert.ok(lo <= -0.005 && hi >= 0.005, `zero is not well inside ${lo}..${hi}`);
  const t = ticks(lo, hi, 0.005);
  assert.ok(t.some((v) => Math.abs(v) < 1e-12), `no tick at zero in ${t}`);
  // The same still arm a moment later (other noise) gets the same range: it does not crawl.
  assert.deepEqual(scale.flatRange(-2e-17, 5e-17, { minSpan: 0.01 }), [lo, hi]);
});

test("a held value is drawn flat around its value; a real span keeps 10 % room", () => {
  const [lo, hi] = scale.flatRange(0.8345, 0.8345 + 1e-9, { minSpan: 0.01 });
  assert.ok(lo < 0.8345 && hi > 0.8345 && hi - lo >= 0.01 && hi - lo <= 0.03, `${lo}..${hi}`);
  const [a, b] = scale.flatRange(0.1, 0.3, { minSpan: 0.01 });
  assert.ok(Math.abs(a - 0.08) < 1e-12 && Math.abs(b - 0.32) < 1e-12, `${a}..${b}`);
  // A norm never gets a negative range.
  const [c] = scale.flatRange(0.01, 2, { minSpan: 0.01, nonNegative: true });
  assert.equal(c, 0);
});

/** Every label reads back as its tick's value (within a thousandth of the spacing). */
function assertExact(labels, splits, incr) {
  labels.forEach((l, i) => {
    const v = Number(l.replace(/k$/, "e3").replace(/M$/, "e6"));
    assert.ok(Math.abs(v - splits[i]) <= incr / 1000, `label "${l}" for ${splits[i]} (spacing ${incr})`);
  });
}

test("tick labels are exact and distinct, one notation per axis: no '.25e-7', no '266e-7' twice", () => {
  const cases = [
    // The ticks: ±1.25e-7 in steps of 2.5e-8 (read ".25e-7" when clipped).
    { splits: ticks(-1.25e-7, 1.25e-7, 2.5e-8), incr: 2.5e-8 },
    // Ticks around 2.66e-7, 5e-10 apart ("266e-7" twice).
    { splits: ticks(2.645e-7, 2.675e-7, 5e-10), incr: 5e-10 },
    // 5e-12 apart: too fine for four digits of mantissa.
    { splits: ticks(2.66e-7, 2.66e-7 + 2e-11, 5e-12), incr: 5e-12 },
    { splits: ticks(-1, 1, 0.25), incr: 0.25 },
    { splits: ticks(0, 0.01, 0.0025), incr: 0.0025 },
    { splits: ticks(10000, 20000, 2500), incr: 2500 },
    { splits: ticks(1440, 1450, 2), incr: 2 },
  ];
  for (const { splits, incr } of cases) {
    const labels = scale.tickLabels(splits, incr);
    assert.equal(labels.length, splits.length);
    assert.equal(new Set(labels).size, labels.length, `repeated labels: ${labels.join(" ")}`);
    assertExact(labels, splits, incr);
    // The labels of one axis share one notation: all with the same power of ten, or none.
    const exps = new Set(labels.filter((l) => l !== "0").map((l) => /e(-?\d+)$/.exec(l)?.[1] ?? ""));
    assert.ok(exps.size <= 1, `mixed notations: ${labels.join(" ")}`);
  }
  // Zero reads "0" or "0.00", never "-0".
  const z = scale.tickLabels([-0.5, -1e-17, 0.5], 0.5);
  assert.ok(!z.some((l) => /^-0(\.0*)?$/.test(l)), z.join(" "));
});

test("overruns, a count, get integer ticks and a range from zero", () => {
  assert.ok(scale.INTEGER_INCRS.length > 5);
  for (const incr of scale.INTEGER_INCRS) assert.ok(Number.isInteger(incr) && incr >= 1, `increment ${incr}`);
  for (const [min, max] of [[0, 0], [3, 3], [0, 17]]) {
    const [lo, hi] = scale.countRange(min, max);
    assert.ok(Number.isInteger(lo) && Number.isInteger(hi) && lo === 0 && hi >= Math.max(2, max), `${min}..${max} → ${lo}..${hi}`);
    // The smallest integer spacing that gives at most 8 ticks: integers only, two or more.
    const incr = scale.INTEGER_INCRS.find((i) => (hi - lo) / i <= 8);
    const t = ticks(lo, hi, incr);
    assert.ok(t.length >= 2 && t.every(Number.isInteger), `${t}`);
  }
});

test("force and torque are drawn as shares of their own bounds: 150 N and 60 N·m both at 1", () => {
  const bounds = { force: 150, torque: 60 };
  // 90 N of 150 and 54 N·m of 60: the torque is the nearer its stop, and is drawn higher,
  // though fewer units; each at its bound reads 1, the one bound line.
  const s = scale.wrenchShares([0, 90, 0, 0, 0, 54], bounds);
  assert.ok(Math.abs(s.force - 0.6) < 1e-12 && Math.abs(s.torque - 0.9) < 1e-12, JSON.stringify(s));
  assert.equal(scale.wrenchShares([150, 0, 0, 60, 0, 0], bounds).force, 1);
  assert.equal(scale.wrenchShares([150, 0, 0, 60, 0, 0], bounds).torque, 1);
  // A bound that is off gives no share (nothing drawn against a bound that is not there).
  assert.equal(scale.wrenchShares([1, 2, 3, 4, 5, 6], { force: null, torque: 60 }).force, null);
  // The axis: 0..1.1, widened for a breach.
  assert.deepEqual(scale.shareRange(0.5), [0, 1.1]);
  assert.ok(scale.shareRange(1.6)[1] >= 1.6);
});

test("readouts: a value against its bound, the nearest joint limit, the door in its range", () => {
  assert.equal(values.levelOf(values.boundShare(70, 150)), "ok");
  assert.equal(values.levelOf(values.boundShare(120, 150)), "near"); // 80 %
  assert.equal(values.levelOf(values.boundShare(151, 150)), "over");
  assert.equal(values.levelOf(values.boundShare(3, null)), "none");
  const joints = Array.from({ length: 7 }, (_, i) => ({ name: `j${i + 1}`, lower: -2, upper: 2 }));
  const q = [0, 1.9, -1.5, 0, 0, 0, 0.5];
  const margins = [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05];
  const n = values.nearestJointLimit(q, joints, margins);
  assert.equal(n.name, "j2");
  assert.equal(n.limit, "upper");
  assert.ok(Math.abs(n.distance - 0.1) < 1e-12 && Math.abs(n.share - 0.5) < 1e-12, JSON.stringify(n));
  // A larger margin on another joint makes that one the nearest to stopping the arm.
  const m2 = [...margins];
  m2[2] = 0.45;
  assert.equal(values.nearestJointLimit(q, joints, m2).name, "j3");
  // Without margins: the smallest distance.
  assert.equal(values.nearestJointLimit(q, joints, null).name, "j2");
  // The door from closed (min) to open (max), and past either end.
  assert.ok(Math.abs(values.rangeShare(0.87, -0.087, 1.745) - 0.5223) < 1e-3);
  assert.equal(values.levelOf(values.rangeShare(1.8, -0.087, 1.745)), "over");
  assert.equal(values.levelOf(values.rangeShare(-0.2, -0.087, 1.745)), "over");
  // Ages.
  assert.equal(values.staleAfterMs(60), 1000);
  assert.equal(values.staleAfterMs(1), 3000);
  assert.equal(values.ageLabel(2345), "no data for 2.3 s");
  assert.equal(values.ageLabel(Infinity), "no data yet");
});

test("the rendering budget steps a starved page down to 2-D, leaves a fluent one, probes back", { skip: !budget }, () => {
  const { LevelChooser, LEVEL_2D, isSoftwareRenderer } = budget;
  assert.ok(isSoftwareRenderer("ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)"));
  assert.ok(isSoftwareRenderer("ANGLE (Mesa/X.org, llvmpipe (LLVM 15.0.6 256 bits), OpenGL 4.5)"));
  assert.ok(!isSoftwareRenderer("ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0)"));
  // SwiftShader forced: the page drew 5–10 frames/s.
  let t = 0;
  const slow = new LevelChooser(1, LEVEL_2D, t, "software WebGL");
  for (let s = 0; s < 8 && slow.level !== LEVEL_2D; s++) slow.sample(7, (t += 1000));
  assert.equal(slow.level, LEVEL_2D);
  assert.ok(t <= 7000, `2-D only after ${t} ms`);
  // A fluent page keeps its level; a single slow second does not move it.
  t = 0;
  const fluent = new LevelChooser(0, LEVEL_2D, t, "WebGL");
  for (let s = 0; s < 60; s++) fluent.sample(s === 20 ? 10 : 59, (t += 1000));
  assert.equal(fluent.level, 0);
  assert.equal(fluent.changes, 0);
  // Fallen back during a passing load: after the backoff and 15 fluent seconds it probes
  // the first level again, and falls back (waiting longer next time) if that fails.
  t = 0;
  const passing = new LevelChooser(1, LEVEL_2D, t, "software WebGL");
  for (let s = 0; s < 8; s++) passing.sample(8, (t += 1000));
  assert.equal(passing.level, LEVEL_2D);
  let probedAt = null;
  for (let s = 0; s < 60 && probedAt === null; s++) {
    passing.sample(60, (t += 1000));
    if (passing.level === 1) probedAt = t;
  }
  assert.ok(probedAt !== null, "never probed");
  for (let s = 0; s < 8; s++) passing.sample(9, (t += 1000));
  assert.equal(passing.level, LEVEL_2D);
});

test("a tag's cells become texels with its top row at the texture's top, and bad cells are refused", { skip: !tag }, () => {
  // Row 0 (the tag's top) white but for its first cell; every other row black.
  const cells = "0" + "1".repeat(9) + "0".repeat(90);
  const texels = tag.tagTexels(cells);
  assert.equal(texels.length, 4 * 10 * 10);
  const grey = (textureRow, col) => texels[4 * (textureRow * 10 + col)];
  // A texture's first row lies at v = 0, the plane's -y edge: the tag's top row is its last.
  assert.equal(grey(9, 0), 0);
  for (let col = 1; col < 10; col++) assert.equal(grey(9, col), 255, `column ${col}`);
  for (let row = 0; row < 9; row++) assert.equal(grey(row, 5), 0, `texture row ${row}`);
  assert.equal(texels[4 * 95 + 3], 255, "opaque");
  assert.throws(() => tag.tagTexels("01"), /tag cells: 2 characters; must be 100 of '0' and '1'/);
  assert.throws(() => tag.tagTexels("2".repeat(100)), /tag cells: 100 characters; must be 100 of '0' and '1'/);
});
