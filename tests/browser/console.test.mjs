// Browser tests of the operator console: Debian's chromium, headless, driven by
// puppeteer-core, against the console served by tether-ground --web (run.sh starts the real
// pair on loopback and sets TETHER_CONSOLE_URL).
//
// Environment: TETHER_CONSOLE_URL (required), TETHER_ARTIFACTS (screenshots; default
// build/browser-artifacts), TETHER_TEST_TASK (the teleoperation task, stored on the
// teleoperated site by run.sh; default door_shared), TETHER_STOP_SITE and TETHER_STOP_TASK
// (the site and stored task of the STOP test: default left, door_force), CHROMIUM (default
// /usr/bin/chromium).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { latest, launch, moved, openConsole as open, shot, sleep, takeControl, waitFor } from "./lib.mjs";

const teleopTask = process.env.TETHER_TEST_TASK ?? "door_shared";
const stopSite = process.env.TETHER_STOP_SITE ?? "left";
const stopTask = process.env.TETHER_STOP_TASK ?? "door_force";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});
const openConsole = (opts) => open(browser, opts);

test("the page loads and the 3-D view draws the arm where it projects", async () => {
  const { page, errors } = await openConsole();
  await sleep(1500); // a few frames with the camera aimed at the arm
  const file = await shot(page, "console.png");
  // Decode the screenshot with the browser's own PNG decoder, then look at the pixels where
  // the arm's links project (from the scene camera's view-projection matrix and the
  // telemetry's points, computed here).
  const png = (await page.screenshot({ encoding: "base64", type: "png" }));
  const result = await page.evaluate(async (b64) => {
    const s = window.__tetherStats;
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement("canvas");
    c.width = img.width;
    c.height = img.height;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const data = g.getImageData(0, 0, c.width, c.height).data;
    const scale = img.width / window.innerWidth;
    const isArm = (x, y) => {
      const i = (Math.round(y * scale) * c.width + Math.round(x * scale)) * 4;
      const [r, gg, b] = [data[i], data[i + 1], data[i + 2]];
      // The arm's orange (0xff8c1a) under Lambert shading: red leads, green about half of
      // it, little blue; the obstacles' red has far less green, the background is grey.
      return r > 90 && gg > 0.35 * r && gg < 0.8 * r && b < 0.45 * r;
    };
    const near = (x, y) => {
      for (let dy = -3; dy <= 3; dy++) for (let dx = -3; dx <= 3; dx++) if (isArm(x + dx, y + dy)) return true;
      return false;
    };
    const proj = s.sceneProjection();
    const m = proj.viewProjection; // column-major 4x4
    const rect = proj.canvasRect;
    const project = ([x, y, z]) => {
      const cx = m[0] * x + m[4] * y + m[8] * z + m[12];
      const cy = m[1] * x + m[5] * y + m[9] * z + m[13];
      const cw = m[3] * x + m[7] * y + m[11] * z + m[15];
      return [rect.left + ((cx / cw + 1) / 2) * rect.width, rect.top + ((1 - cy / cw) / 2) * rect.height];
    };
    const pts = proj.armPoints;
    const samples = [];
    for (let i = 0; i + 1 < pts.length; i++) {
      for (const f of [0.25, 0.5, 0.75]) {
        const p = pts[i].map((v, k) => v + f * (pts[i + 1][k] - v));
        const [x, y] = project(p);
        samples.push({ link: i, x, y, hit: near(x, y) });
      }
    }
    // Arm pixels in the whole canvas, and in a control region: the canvas's top-left corner.
    let armPixels = 0;
    for (let y = rect.top; y < rect.top + rect.height; y += 2)
      for (let x = rect.left; x < rect.left + rect.width; x += 2) if (isArm(x, y)) armPixels++;
    let cornerPixels = 0;
    for (let y = rect.top; y < rect.top + 40; y++)
      for (let x = rect.left; x < rect.left + 40; x++) if (isArm(x, y)) cornerPixels++;
    return { samples, armPixels, cornerPixels, rect, points: pts.length, sceneBodies: s.sceneBodies };
  }, png);
  const hits = result.samples.filter((s) => s.hit).length;
  console.log(
    `3-D view: ${hits}/${result.samples.length} projected link samples on arm-coloured pixels; ` +
      `${result.armPixels} arm pixels (every 2nd row and column) in the canvas; ` +
      `${result.cornerPixels} in the top-left 40x40 control corner; screenshot ${file}`,
  );
  assert.ok(result.points >= 3, "telemetry carries the arm's points");
  // The door scene as the site reports it: panel, handle and the frame's three parts.
  console.log(`3-D view: ${result.sceneBodies} scene bodies drawn`);
  assert.ok(result.sceneBodies >= 5, `only ${result.sceneBodies} scene bodies drawn`);
  assert.ok(hits >= 0.8 * result.samples.length, `only ${hits}/${result.samples.length} samples on the arm`);
  assert.ok(result.armPixels > 200, `only ${result.armPixels} arm pixels`);
  assert.equal(result.cornerPixels, 0, "arm colour where the arm is not");
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("the plots keep redrawing beside two 1 kHz sites (the rate printed)", async () => {
  // A laptop's screen: on two cores shared with two 1 kHz sites, chromium's software
  // compositing of the full 1500 x 1100 page alone held the frame rate near 25/s. Plots
  // scrolled out of view are not drawn; the ones in view must keep the rate.
  const { page } = await openConsole({ width: 1280, height: 800 });
  await sleep(1000);
  // Where the main thread's time goes, for when the rate falls short (Chrome's metrics).
  const metric = async () =>
    Object.fromEntries((await page.metrics ? Object.entries(await page.metrics()) : []));
  const ma = await metric();
  const a = await page.evaluate(() => ({ ...window.__tetherStats, now: performance.now() }));
  await sleep(5000);
  const b = await page.evaluate(() => ({ ...window.__tetherStats, now: performance.now() }));
  const mb = await metric();
  const dt = (b.now - a.now) / 1000;
  const redrawHz = (b.plotRedraws - a.plotRedraws) / dt;
  const telemetryHz = (b.telemetry - a.telemetry) / dt;
  const share = (k) => `${(((mb[k] ?? 0) - (ma[k] ?? 0)) / dt * 100).toFixed(0)} %`;
  console.log(`plots: ${redrawHz.toFixed(1)} redraws/s; telemetry ${telemetryHz.toFixed(1)} messages/s (all sites); ` +
    `main thread busy ${share("TaskDuration")} (script ${share("ScriptDuration")}, layout ${share("LayoutDuration")}, ` +
    `style ${share("RecalcStyleDuration")})`);
  await shot(page, "plots.png");
  // The issue's target is 25 Hz, held by the benchmark (render-rate.sh); run.sh sets a floor
  // of 15 Hz here (TETHER_MIN_PLOT_HZ), a rate on a shared machine being a figure. On the 2-core CI
  // machine, beside two 1 kHz sites and chromium's software rendering, the page measured
  // 23.9–27.5 Hz (main thread 70–90 % busy) before its plots updated their columns in place
  // and its 3-D view drew only when the arm moved; since, 29–38 Hz (50–75 % busy), the
  // lower figures with a compiler running beside it. The figure is printed.
  const minHz = Number(process.env.TETHER_MIN_PLOT_HZ ?? 25);
  assert.ok(redrawHz >= minHz, `plots redraw at ${redrawHz.toFixed(1)} Hz (at least ${minHz} required)`);
  await page.close();
});

test("a bad upload shows the field's error in the editor", async () => {
  const { page } = await openConsole();
  const bad = [
    "# a negative mass: refused by validation",
    'name: "web_bad"',
    "impedance {",
    "  mass { translation { x: 10 y: 10 z: 10 } rotation { x: -2 y: 2 z: 2 } arm_angle: 2 }",
    "}",
  ].join("\n");
  await page.$eval("#task-name", (e) => (e.value = "web_bad"));
  await page.$eval("#task-text", (e, t) => {
    e.value = t;
    e.dispatchEvent(new Event("input"));
  }, bad);
  await page.click("#task-upload");
  await page.waitForSelector("#task-errors li", { timeout: 10_000 });
  const shown = await page.$$eval("#task-errors li", (lis) =>
    lis.map((li) => ({ field: li.dataset.field, line: li.dataset.line, text: li.textContent })),
  );
  const marked = await page.$$eval("#editor-gutter .err", (ds) => ds.map((d) => d.dataset.line));
  console.log(`bad upload: errors ${JSON.stringify(shown)}; marked lines ${marked.join(",")}`);
  await page.$eval("#tasks", (e) => e.scrollIntoView({ block: "end" }));
  await shot(page, "bad_upload.png", { viewport: true });
  const err = shown.find((e) => e.field === "impedance.mass.rotation.x");
  assert.ok(err, "no error for impedance.mass.rotation.x");
  assert.match(err.text, /-2/);
  assert.equal(err.line, "4", "the error points at the line with the field");
  assert.deepEqual(marked, ["4"]);
  await page.close();
});

test("a camera's video arrives, decodes and carries its capture times", async () => {
  const { page, errors } = await openConsole();
  await page.waitForFunction(() => document.querySelectorAll("#camera-choice option").length > 0,
    { timeout: 10_000 });
  const cameras = await page.$$eval("#camera-choice option", (os) => os.map((o) => o.value));
  await page.select("#camera-choice", "overview");
  await page.click("#camera-watch");
  await sleep(4000);
  const v = await page.evaluate(() => {
    const s = window.__tetherStats.video;
    const ages = [...s.ages].sort((a, b) => a - b);
    const arrivals = [...s.arrivals].sort((a, b) => a - b);
    const fromGround = [...s.fromGround].sort((a, b) => a - b);
    return {
      received: s.received, decoded: s.decoded, drawn: s.drawn, fps: s.fps, errors: s.decodeErrors,
      known: ages.length, median: ages[Math.floor(ages.length / 2)], worst: ages[ages.length - 1],
      arrival: arrivals[Math.floor(arrivals.length / 2)],
      fromGround: fromGround[Math.floor(fromGround.length / 2)],
      ground: s.ground, status: document.querySelector("#camera-status").textContent,
    };
  });
  // The picture: the scene on the canvas, not a blank.
  const spread = await page.$eval("#camera-canvas", (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let lo = 255;
    let hi = 0;
    for (let i = 0; i < d.length; i += 4 * 97) {
      lo = Math.min(lo, d[i]);
      hi = Math.max(hi, d[i]);
    }
    return hi - lo;
  });
  await page.$eval("#cameras", (e) => e.scrollIntoView({ block: "center" }));
  const file = await shot(page, "camera.png", { viewport: true });
  console.log(`camera view (cameras: ${cameras.join(", ")}): ${v.received} frames received, ` +
    `${v.decoded} decoded, ${v.drawn} drawn, ${v.fps} fps; capture to drawn ${v.median?.toFixed(0)} ms ` +
    `median, ${v.worst?.toFixed(0)} ms worst (${v.known} frames), of which capture to arrival ` +
    `${v.arrival?.toFixed(0)} ms median (ground to page ${v.fromGround?.toFixed(0)} ms); status "${v.status}"; ground ` +
    `${JSON.stringify(v.ground)}; pixel spread ${spread}; screenshot ${file}`);
  assert.deepEqual(cameras, ["wrist", "overview", "stereo_left", "stereo_right"]);
  assert.ok(v.decoded >= 10, `only ${v.decoded} frames decoded in 4 s`);
  assert.equal(v.errors, 0);
  assert.ok(v.known >= 10, `capture times known for ${v.known} frames only`);
  assert.ok(v.median >= 0 && v.median < 1000, `capture to drawn ${v.median} ms`);
  assert.ok(spread > 30, "the camera's picture is blank");
  assert.match(v.status, /overview: \d+ fps · frame on screen [0-9.]+ s old/);
  await page.click("#camera-watch");  // stop
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("the predicted arm is drawn over the camera's video through its pose", async () => {
  const { page, errors } = await openConsole();
  await page.waitForFunction(() => document.querySelectorAll("#camera-choice option").length > 0,
    { timeout: 10_000 });
  const overlayOn = await page.$eval("#camera-overlay", (e) => e.checked);
  await page.select("#camera-choice", "overview");
  await page.click("#camera-watch");
  await waitFor(page, () => window.__tetherStats.video.drawn >= 5, null, 15_000);
  // Every frame of a site that knows its cameras' poses carries one (header version 2).
  const posed = await page.waitForFunction(() => window.__tetherStats.video.pose !== null, { timeout: 5_000 })
    .then(() => true, () => false);
  await sleep(500); // the overlay follows a frame within an animation frame
  const read = () => page.evaluate(() => {
    const s = window.__tetherStats.video;
    const t = window.__tetherStats.latest();
    const c = document.querySelector("#camera-canvas");
    const o = document.querySelector("#camera-overlay-canvas");
    const box = (e) => {
      const r = e.getBoundingClientRect();
      return [r.left, r.top, r.width, r.height].map((v) => Math.round(v));
    };
    // The overlay's pixels: how many are drawn at all, and how many in the arm's orange.
    const d = o.getContext("2d").getImageData(0, 0, o.width, o.height).data;
    let painted = 0;
    let orange = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] === 0) continue;
      painted++;
      if (d[i] > 200 && d[i + 1] > 100 && d[i + 1] < 180 && d[i + 2] < 80) orange++;
    }
    return {
      pose: s.pose, width: c.width, height: c.height, videoBox: box(c), overlayBox: box(o),
      overlaySize: [o.width, o.height], base: s.overlay.project([0, 0, 0]),
      tool: t.points.length ? s.overlay.project(t.points[t.points.length - 1]) : null,
      drawn: s.overlay.drawnSegments, arm: s.overlay.armSegments, ghost: s.overlay.ghostSegments,
      predictedDrawn: s.overlay.predicted, points: t.points.length,
      predicted: t.predicted ? t.predicted.points.length : null, painted, orange,
    };
  });
  const v = await read();
  await page.$eval("#cameras", (e) => e.scrollIntoView({ block: "center" }));
  const file = await shot(page, "camera_overlay.png", { viewport: true });
  // Off: the overlay is cleared; on again: drawn again.
  await page.click("#camera-overlay");
  await sleep(300);
  const off = await read();
  await page.click("#camera-overlay");
  await sleep(300);
  const on = await read();
  console.log(`camera overlay (on by default: ${overlayOn}): pose ${posed ? JSON.stringify(v.pose) : "none"}; ` +
    `BASE origin at ${JSON.stringify(v.base)}, the tool at ${JSON.stringify(v.tool)} in the ${v.width}x${v.height} ` +
    `image; segments drawn ${v.drawn} (arm ${v.arm} of ${v.points - 1}, predicted ${v.ghost}; telemetry's ` +
    `predicted points: ${v.predicted ?? "none"}); overlay pixels ${v.painted} (${v.orange} orange); ` +
    `unchecked: ${off.drawn} segments, ${off.painted} pixels; checked again: ${on.drawn}; screenshot ${file}`);
  assert.ok(overlayOn, "the overlay is on by default");
  assert.deepEqual(v.overlayBox, v.videoBox, "the overlay lies over the picture");
  assert.deepEqual(v.overlaySize, [v.width, v.height], "the overlay has the picture's pixels");
  assert.ok(posed && v.pose, "no frame carried the camera's pose (frame header version 2, flag bit 2)");
  assert.ok(Math.abs(Math.hypot(...v.pose.quat) - 1) < 1e-3, `not a unit quaternion: ${v.pose.quat}`);
  // The arm's base (BASE's origin) stands in the overview camera's picture.
  assert.ok(v.base, "the BASE origin projects behind the camera");
  assert.ok(v.base[0] > 0 && v.base[0] < v.width && v.base[1] > 0 && v.base[1] < v.height,
    `the BASE origin projects to ${v.base}, outside the ${v.width}x${v.height} image`);
  // The arm as reported is always drawn (all of it in front of this camera); the predicted
  // arm only when the telemetry carries one (a delayed link with a local model).
  assert.ok(v.points >= 2, "telemetry carries the arm's points");
  assert.equal(v.arm, v.points - 1, "every link of the reported arm drawn");
  assert.equal(v.predictedDrawn, v.predicted !== null);
  if (v.predicted !== null) assert.equal(v.ghost, v.predicted - 1, "every link of the predicted arm drawn");
  else assert.equal(v.ghost, 0, "a predicted arm drawn without one");
  assert.equal(v.drawn, v.arm + v.ghost);
  assert.ok(v.orange > 20, `only ${v.orange} arm-coloured overlay pixels`);
  assert.equal(off.drawn, 0, "segments drawn with the overlay unchecked");
  assert.equal(off.painted, 0, "the overlay is not cleared when unchecked");
  assert.equal(on.drawn, v.drawn, "the overlay is not drawn again when checked");
  await page.click("#camera-watch"); // stop
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("the stereo pair plays side by side and as an anaglyph", async () => {
  const { page, errors } = await openConsole();
  await page.waitForFunction(() => document.querySelectorAll("#camera-choice option").length > 0,
    { timeout: 10_000 });
  const offeredAlone = await page.$eval("#camera-stereo", (e) => !e.hidden); // overview, or the first
  await page.select("#camera-choice", "stereo_left");
  const offered = await page.$eval("#camera-stereo", (e) => !e.hidden);
  await page.select("#camera-stereo", "side-by-side");
  await page.click("#camera-watch");
  // Both sides drew frames, or the view ended (then the status says why).
  const bothDrew = ({ mode, from }) => {
    const s = window.__tetherStats.video.stereo;
    return window.__tetherStats.video.streams === 0 ||
      (!!s && s.mode === mode && s.left.drawn >= from[0] + 5 && s.right.drawn >= from[1] + 5);
  };
  const playing = async (what) => {
    const st = await page.evaluate(() => ({
      streams: window.__tetherStats.video.streams, status: document.querySelector("#camera-status").textContent,
    }));
    assert.equal(st.streams, 2, `the ${what} view ended: "${st.status}"`);
  };
  await waitFor(page, bothDrew, { mode: "side-by-side", from: [0, 0] }, 20_000);
  await playing("side-by-side");
  await waitFor(page, () => /side by side/.test(document.querySelector("#camera-status").textContent));
  // The picture's two halves: each not blank (the spread of its red channel), and not the
  // same (the cameras stand 10 cm apart); red- and cyan-dominant pixels of an anaglyph.
  const look = () => page.evaluate(() => {
    const s = window.__tetherStats.video;
    const c = document.querySelector("#camera-canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    const half = c.width / 2;
    const spread = [[255, 0], [255, 0]];
    let diff = 0;
    let n = 0;
    let red = 0;
    let cyan = 0;
    for (let y = 0; y < c.height; y += 3) {
      for (let x = 0; x < c.width; x += 3) {
        const i = (y * c.width + x) * 4;
        const [r, g, b] = [d[i], d[i + 1], d[i + 2]];
        if (r > g + 40 && r > b + 40) red++;
        if (Math.min(g, b) > r + 40) cyan++;
        const side = x < half ? 0 : 1;
        spread[side][0] = Math.min(spread[side][0], r);
        spread[side][1] = Math.max(spread[side][1], r);
        if (x < half) {
          diff += Math.abs(r - d[i + 4 * half]);
          n++;
        }
      }
    }
    const side = (k) => ({ camera: s.stereo?.[k].camera, drawn: s.stereo?.[k].drawn, decoded: s.stereo?.[k].decoded });
    return {
      mode: s.stereo?.mode, left: side("left"), right: side("right"), streams: s.streams,
      size: [c.width, c.height], spreads: spread.map(([lo, hi]) => hi - lo), halvesDiffer: diff / n,
      red, cyan, errors: s.decodeErrors, status: document.querySelector("#camera-status").textContent,
    };
  });
  const sbs = await look();
  await page.$eval("#cameras", (e) => e.scrollIntoView({ block: "center" }));
  const sbsFile = await shot(page, "camera_side_by_side.png", { viewport: true });
  // While playing: the same two views, composed otherwise from their next frames.
  await page.select("#camera-stereo", "anaglyph");
  await waitFor(page, bothDrew, { mode: "anaglyph", from: [sbs.left.drawn, sbs.right.drawn] }, 20_000);
  await playing("anaglyph");
  await sleep(300);
  const ana = await look();
  await page.$eval("#cameras", (e) => e.scrollIntoView({ block: "center" }));
  const anaFile = await shot(page, "camera_anaglyph.png", { viewport: true });
  await page.click("#camera-watch"); // stop
  const stopped = await page.evaluate(() => ({
    streams: window.__tetherStats.video.streams, button: document.querySelector("#camera-watch").textContent,
  }));
  console.log(`stereo (offered for the first camera: ${offeredAlone}, for stereo_left: ${offered}): ` +
    `side by side ${JSON.stringify(sbs)}; anaglyph ${JSON.stringify(ana)}; after the stop ` +
    `${JSON.stringify(stopped)}; screenshots ${sbsFile}, ${anaFile}`);
  assert.ok(offered, "no stereo choice for stereo_left");
  assert.equal(sbs.streams, 2);
  assert.equal(sbs.left.camera, "stereo_left");
  assert.equal(sbs.right.camera, "stereo_right");
  assert.ok(sbs.size[0] === 2 * ana.size[0] && sbs.size[1] === ana.size[1],
    `side by side ${sbs.size}, one picture ${ana.size}: not twice as wide`);
  assert.ok(sbs.spreads[0] > 30 && sbs.spreads[1] > 30, `a blank half: spreads ${sbs.spreads}`);
  assert.ok(sbs.halvesDiffer > 1, `the halves are the same picture (${sbs.halvesDiffer})`);
  assert.match(sbs.status, /stereo_left \+ stereo_right \(side by side\): \d+ \+ \d+ fps/);
  assert.equal(ana.mode, "anaglyph");
  assert.equal(ana.streams, 2);
  assert.ok(ana.red > 0 && ana.cyan > 0, `anaglyph: ${ana.red} red-dominant, ${ana.cyan} cyan-dominant pixels`);
  assert.equal(sbs.errors + ana.errors, 0);
  assert.deepEqual(stopped, { streams: 0, button: "watch" });
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("the pan-tilt mount turns the stereo pair and the frames' pose follows", async () => {
  const { page, errors } = await openConsole();
  await page.waitForFunction(() => document.querySelectorAll("#camera-choice option").length > 0,
    { timeout: 10_000 });
  // Aiming the head needs the site's lease: this ground's person holds left's (its
  // teleoperation stream keeps it), or takes it here.
  await takeControl(page, "left");
  await page.select("#camera-choice", "overview");
  const hiddenForFixed = await page.$eval("#camera-aim", (e) => e.hidden);
  await page.select("#camera-choice", "stereo_left");
  const shownForHead = await page.$eval("#camera-aim", (e) => !e.hidden);
  await page.select("#camera-stereo", "single");
  await page.click("#camera-watch");
  await waitFor(page, () => window.__tetherStats.video.streams === 0 ||
    (!!window.__tetherStats.video.pose && window.__tetherStats.video.drawn >= 3), undefined, 20_000);
  const playing = async (what) => {
    const st = await page.evaluate(() => ({
      streams: window.__tetherStats.video.streams, status: document.querySelector("#camera-status").textContent,
    }));
    assert.equal(st.streams, 1, `the view of stereo_left ended ${what}: "${st.status}"`);
  };
  await playing("before the head turned");
  const quat = () => page.evaluate(() => window.__tetherStats.video.pose.quat);
  // The rotation from orientation a to b (both of C in BASE): q = b · a⁻¹, its angle [deg]
  // and its axis in BASE (of the shorter way round).
  const turn = (a, b) => {
    const [aw, ax, ay, az] = a;
    const [bw, bx, by, bz] = b;
    let w = bw * aw + bx * ax + by * ay + bz * az;
    let x = -bw * ax + bx * aw - by * az + bz * ay;
    let y = -bw * ay + bx * az + by * aw - bz * ax;
    let z = -bw * az - bx * ay + by * ax + bz * aw;
    if (w < 0) [w, x, y, z] = [-w, -x, -y, -z];
    const v = Math.hypot(x, y, z);
    return {
      deg: (2 * Math.atan2(v, w) * 180) / Math.PI,
      axis: v > 0 ? [x / v, y / v, z / v] : [0, 0, 0],
    };
  };
  const start = await quat();
  await page.click("#camera-pan-left");
  await page.click("#camera-pan-left");
  await sleep(1500); // 20° at 60°/s, and frames after
  await playing("while the head turned");
  const panned = await quat();
  const aim = await page.evaluate(() => ({ ...window.__tetherStats.video.aim }));
  const statusPanned = await page.$eval("#camera-status", (e) => e.textContent);
  await page.click("#camera-aim-centre");
  await sleep(1500);
  await playing("while the head turned back");
  const back = await quat();
  const centred = await page.evaluate(() => ({ ...window.__tetherStats.video.aim }));
  await page.click("#camera-watch"); // stop
  const t1 = turn(start, panned);
  const t2 = turn(start, back);
  console.log(`pan-tilt mount: 2 presses of pan left turned the frames' pose ${t1.deg.toFixed(2)}° about ` +
    `${JSON.stringify(t1.axis.map((c) => +c.toFixed(4)))} (BASE); centre left it ${t2.deg.toFixed(2)}° off; ` +
    `aim ${JSON.stringify(aim)}, then ${JSON.stringify(centred)}; status "${statusPanned}"`);
  assert.ok(hiddenForFixed, "the head's controls are offered for a fixed camera");
  assert.ok(shownForHead, "the head's controls are not offered for the stereo pair");
  assert.equal(aim.lastError, "", `the aim was refused: ${aim.lastError}`);
  assert.deepEqual([aim.pan_deg, aim.tilt_deg], [20, 0]);
  assert.ok(Math.abs(t1.deg - 20) <= 2, `turned ${t1.deg}°, not 20°`);
  assert.ok(Math.abs(t1.axis[2]) > 0.99, `not about BASE z: axis ${t1.axis}`);
  assert.ok(t1.axis[2] > 0, `pan left turned clockwise seen from above: axis ${t1.axis}`);
  assert.equal(centred.lastError, "", `centre was refused: ${centred.lastError}`);
  assert.deepEqual([centred.pan_deg, centred.tilt_deg], [0, 0]);
  assert.ok(t2.deg <= 2, `centre left the head ${t2.deg}° off`);
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("a view can set camera mode's EYE frame", async () => {
  const { page, errors } = await openConsole();
  await page.waitForFunction(() => document.querySelectorAll("#camera-choice option").length > 0,
    { timeout: 10_000 });
  await takeControl(page, "left"); // an EYE view is the lease holder's
  const eyeOff = await page.$eval("#camera-eye", (e) => !e.checked);
  await page.select("#camera-choice", "overview");
  await page.click("#camera-watch");
  await waitFor(page, () => window.__tetherStats.video.streams === 0 || window.__tetherStats.video.drawn >= 3,
    undefined, 20_000);
  const state = () => page.evaluate(() => ({
    eye: window.__tetherStats.video.eye, streams: window.__tetherStats.video.streams,
    camera: window.__tetherStats.video.camera, drawn: window.__tetherStats.video.drawn,
    lastError: window.__tetherStats.video.lastError, status: document.querySelector("#camera-status").textContent,
  }));
  const before = await state();
  // Checked: the view reopens with eye=1 (its counts start again) and draws frames, or ends
  // (camera_end: the status says why).
  await page.click("#camera-eye");
  await waitFor(page, () => window.__tetherStats.video.streams === 0 ||
    (window.__tetherStats.video.eye && window.__tetherStats.video.drawn >= 3 &&
      /EYE for camera mode/.test(document.querySelector("#camera-status").textContent)), undefined, 20_000);
  await sleep(1000); // a refusal would end the view by now
  const on = await state();
  // Unchecked: reopened without.
  await page.click("#camera-eye");
  await waitFor(page, () => window.__tetherStats.video.streams === 0 ||
    (!window.__tetherStats.video.eye && window.__tetherStats.video.drawn >= 3 &&
      !/EYE for camera mode/.test(document.querySelector("#camera-status").textContent)), undefined, 20_000);
  const off = await state();
  await page.click("#camera-watch"); // stop
  console.log(`EYE view: before ${JSON.stringify(before)}; checked ${JSON.stringify(on)}; unchecked ${JSON.stringify(off)}`);
  assert.ok(eyeOff, "the EYE box is checked by default");
  assert.equal(before.streams, 1, `the view of overview ended: "${before.status}"`);
  assert.ok(!before.eye && !/EYE/.test(before.status), `a view is the EYE unasked: "${before.status}"`);
  assert.equal(on.streams, 1, `the EYE view of overview ended: "${on.status}"`);
  assert.ok(on.eye, "the view did not reopen with eye");
  assert.equal(on.camera, "overview");
  assert.ok(on.drawn >= 3, `${on.drawn} frames drawn after the view reopened as the EYE`);
  assert.doesNotMatch(on.status, /ended/);
  assert.match(on.status, /overview: \d+ fps .* · EYE for camera mode/);
  assert.equal(on.lastError, "");
  assert.equal(off.streams, 1, `the view of overview ended when it stopped being the EYE: "${off.status}"`);
  assert.ok(!off.eye);
  assert.deepEqual(errors.filter((e) => !/GL Driver Message/.test(e)), []);
  await page.close();
});

test("the task library views, validates (with the preview) and diffs a stored task", async () => {
  const { page } = await openConsole();
  await page.waitForSelector(`#library-stored li[data-task="${teleopTask}"]`, { timeout: 10_000 });
  await page.click(`#library-stored li[data-task="${teleopTask}"]`);
  await waitFor(page, (t) => document.querySelector("#task-text").value.includes(`name: "${t}"`), teleopTask);
  await page.click("#task-validate");
  await waitFor(page, () => /^validate: |^valid/.test(document.querySelector("#task-result").textContent) &&
    !/…$/.test(document.querySelector("#task-result").textContent), null, 60_000);
  const validated = await page.$eval("#task-result", (e) => e.textContent);
  // One change against the stored revision: the torque bound.
  await page.$eval("#task-text", (e) => {
    e.value = e.value.replace(/max_torque_nm: [0-9.e+]+/, "max_torque_nm: 123");
    e.dispatchEvent(new Event("input"));
  });
  await page.click("#task-diff");
  await waitFor(page, () => /^diff|→/.test(document.querySelector("#task-result").textContent) &&
    !/…$/.test(document.querySelector("#task-result").textContent));
  const diff = await page.$eval("#task-result", (e) => e.textContent);
  const commands = await page.$$eval("#commands .command", (rs) => rs.map((r) => r.dataset.command));
  console.log(`task library: validate → ${JSON.stringify(validated.slice(0, 160))}…; diff → ${JSON.stringify(diff)}; commands ${commands.join(", ")}`);
  assert.match(validated, /^valid/);
  assert.match(diff, /max_torque_nm: 200 → 123/);
  assert.ok(commands.length > 0, "no task commands listed");
  await page.close();
});

test("the sites view takes and releases a site's control lease", async () => {
  // A site the ground does not teleoperate: its lease is free to take and to give back (the
  // teleoperated one stays held while the ground's teleoperation stream is open).
  const { page } = await openConsole();
  const site = await page.evaluate(() =>
    [...document.querySelectorAll(".site[data-site]")].map((r) => r.dataset.site).find((n) => n !== "left"));
  assert.ok(site, "a second site");
  const button = `.site[data-site="${site}"] button.lease`;
  const holder = `.site[data-site="${site}"] .lease-holder`;
  await takeControl(page, site);
  const held = await page.$eval(holder, (e) => e.textContent);
  await page.click(button);
  await waitFor(page, (b) => document.querySelector(b).textContent === "take control" &&
    /released/.test(document.querySelector("#lease-msg").textContent), button);
  // The next status poll confirms it.
  await sleep(1500);
  const after = await page.$eval(holder, (e) => e.textContent);
  console.log(`lease of ${site}: held by "${held}", after the release "${after}"`);
  assert.notEqual(held, "—");
  assert.equal(after, "—");
  await page.close();
});

test("STOP (Escape) stops the arm", async () => {
  // A task that moves the arm by itself (the door opened by force), started from the page.
  const { page } = await openConsole();
  await page.select("#active-site", stopSite);
  await takeControl(page, stopSite);
  await page.$eval("#run-task", (e, t) => (e.value = t), stopTask);
  await page.click("#task-start");
  await waitFor(page, () => window.__tetherStats.latest()?.state === "RUNNING", null, 20_000);
  // The audit trail refreshes by itself: the start's record comes without a click.
  const started = Date.now();
  await waitFor(page, () => /StartTask/.test(document.querySelector("#audit-lines").textContent), null, 10_000);
  const auditMs = Date.now() - started;
  await sleep(1000);
  const a0 = await latest(page);
  await sleep(500);
  const a1 = await latest(page);
  const before = moved(a0, a1);
  await page.keyboard.press("Escape");
  const pressed = Date.now();
  await waitFor(page, () => /^(STOPPED|IDLE)$/.test(window.__tetherStats.latest()?.state ?? ""));
  const stoppedMs = Date.now() - pressed;
  await sleep(500); // the controlled stop's ramp (the task's stop time) is over by now
  const b0 = await latest(page);
  await sleep(500);
  const b1 = await latest(page);
  const after = moved(b0, b1);
  const row = await page.$eval(".site.active .site-state", (e) => e.textContent);
  const result = await page.$eval("#stop-result", (e) => e.textContent);
  console.log(`audit trail: the start's record shown ${auditMs} ms after RUNNING, without a click`);
  console.log(
    `STOP on ${stopSite}: the arm moved ${(before * 1000).toFixed(1)} mm in 0.5 s while running; ` +
      `state ${b1.state} ${stoppedMs} ms after Escape (header: "${result}", site row ${row}); ` +
      `then ${(after * 1000).toFixed(2)} mm in 0.5 s`,
  );
  await shot(page, "stopped.png");
  assert.ok(before > 0.001, "the arm did not move before STOP: nothing to stop");
  assert.match(b1.state, /^(STOPPED|IDLE)$/);
  assert.ok(after < 0.002, "the arm still moves after STOP");
  await page.close();
});

test("teleoperation from a scripted gamepad moves the arm; closing the page releases it", async () => {
  // Standard mapping, R1 (button 5) held as the enabling switch; the right stick's vertical
  // axis (axes[3]) drives wx, the rotation about the hinge the door task lets the operator
  // command: a quarter deflection, 0.125 rad/s, closes the door a little (the STOP test
  // before opened it) without reaching a joint limit.
  const buttons = new Array(17).fill(0);
  buttons[5] = 1;
  // The observer first: a page opened later hides the earlier ones, and a hidden console
  // releases its enable (as it must), so the teleoperating page is the one in front.
  const observer = await openConsole();
  const { page } = await openConsole({
    gamepad: { mapping: "standard", axes: [0, 0, 0, 0.25], buttons },
  });
  await page.bringToFront();
  // Lease, then the teleoperation task, from the page's own controls.
  await takeControl(page, "left");
  // The STOP test left the site stopped: reset (an operator stop clears), then start.
  await page.click("#task-reset");
  await waitFor(page, () => window.__tetherStats.latest()?.state === "IDLE");
  await page.$eval("#run-task", (e, t) => (e.value = t), teleopTask);
  await page.click("#task-start");
  await waitFor(page, () => window.__tetherStats.latest()?.state === "RUNNING");
  const before = await latest(page);
  await page.click("#teleop-arm");
  await waitFor(page, () => window.__tetherStats.teleopLog.some((t) => t.enabled));
  // The gamepad messages as they leave for the socket: their times, for the rate and the
  // longest gap between two (the ground releases the enable after 250 ms without one).
  await page.evaluate(() => {
    window.__padTimes = [];
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
      if (typeof data === "string" && data.startsWith('{"type":"gamepad"')) window.__padTimes.push(performance.now());
      return send.call(this, data);
    };
  });
  await sleep(2000);
  const during = await latest(page);
  const times = await page.evaluate(() => window.__padTimes.slice());
  const sentHz = (times.length - 1) / ((times.at(-1) - times[0]) / 1000);
  const gaps = times.slice(1).map((t, i) => t - times[i]).sort((x, y) => x - y);
  const gap = (q) => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))].toFixed(0);
  const d = moved(before, during);
  console.log(`teleop: gamepad messages at ${sentHz.toFixed(0)} Hz (gaps: median ${gap(0.5)} ms, 95 % ${gap(0.95)} ms, ` +
    `longest ${gap(1)} ms); the arm moved ${(d * 1000).toFixed(1)} mm in 2 s; state ${during.state}`);
  await shot(page, "teleop.png");
  assert.ok(d > 0.005, `the arm moved only ${(d * 1000).toFixed(1)} mm`);
  // The protocol asks for 50–125 Hz; the page sends at 100 Hz from a timer of its own.
  assert.ok(sentHz >= 50 && sentHz <= 125, `gamepad messages at ${sentHz.toFixed(0)} Hz`);

  // Close the teleoperating page with the stick still deflected: the enable goes at once,
  // every other browser is told, and the arm comes to rest.
  const closed = Date.now();
  await page.close({ runBeforeUnload: true });
  await waitFor(observer.page, () => {
    const log = window.__tetherStats.teleopLog;
    return log.length > 0 && log[log.length - 1].enabled === false;
  }, null, 5000);
  const releasedMs = Date.now() - closed;
  const release = await observer.page.evaluate(() => window.__tetherStats.teleopLog.at(-1));
  let rest = null;
  for (let k = 0; k < 10 && rest === null; k++) {
    const a = await latest(observer.page);
    await sleep(500);
    const b = await latest(observer.page);
    if (moved(a, b) < 0.002) rest = { ms: Date.now() - closed, state: b.state };
  }
  console.log(
    `after close: release announced to another page within ${releasedMs} ms ` +
      `(reason "${release.reason}"); arm at rest ${rest ? `${rest.ms} ms after the close, state ${rest.state}` : "never"}`,
  );
  assert.ok(["page hidden", "socket closed", "heartbeat"].includes(release.reason), release.reason);
  assert.ok(rest, "the arm still moves 5 s after the page closed");
  await observer.page.close();
});

test("with logins, a person logs in over HTTPS and the site sees them by name", async () => {
  // run.sh's second ground: --web-tls, --web-users (bob, password TETHER_LOGIN_PASSWORD),
  // watching the same sites. bob's lease of a site shows the site took the call as his.
  const loginUrl = process.env.TETHER_LOGIN_URL;
  assert.ok(loginUrl, "TETHER_LOGIN_URL (run.sh's ground with logins)");
  const password = process.env.TETHER_LOGIN_PASSWORD;
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  const sockets = [];
  cdp.on("Network.webSocketCreated", (e) => sockets.push(e.url));
  await page.goto(loginUrl, { waitUntil: "load" });
  await page.waitForSelector("#login:not([hidden])", { timeout: 10_000 });
  const stopBefore = await page.$eval("#stop", (b) => ({ disabled: b.disabled, title: b.title }));
  const socketsBefore = sockets.length;
  await page.type("#login-user", "bob");
  await page.type("#login-password", "not bob's");
  await page.click("#login-submit");
  await waitFor(page, () => /wrong user or password/.test(document.querySelector("#login-error").textContent),
    undefined, 15_000);
  await page.$eval("#login-password", (e) => (e.value = ""));
  await page.type("#login-password", password);
  await page.click("#login-submit");
  await page.waitForSelector("#login[hidden]", { timeout: 15_000 });
  await waitFor(page, () => !document.querySelector("#logout").hidden && !document.querySelector("#stop").disabled);
  for (let k = 0; k < 50 && sockets.length === socketsBefore; k++) await sleep(100);
  const socketAfter = sockets.at(-1) ?? "";
  const cookies = await page.cookies();
  const session = cookies.find((c) => c.name === "tether_session");
  // bob takes the second site's lease: the site names him as its holder.
  await waitFor(page, () => document.querySelectorAll(".site[data-site]").length >= 2);
  const site = await page.evaluate(() =>
    [...document.querySelectorAll(".site[data-site]")].map((r) => r.dataset.site).find((n) => n !== "left"));
  await takeControl(page, site);
  const holder = `.site[data-site="${site}"] .lease-holder`;
  await waitFor(page, (h) => /^bob( \(renewed [0-9.]+ s ago\))?$/.test(document.querySelector(h).textContent), holder, 10_000);
  await shot(page, "logged_in.png", { viewport: true });
  await page.click(`.site[data-site="${site}"] button.lease`);  // give it back
  await waitFor(page, () => /released/.test(document.querySelector("#lease-msg").textContent));
  await page.click("#logout");
  await page.waitForSelector("#login:not([hidden])", { timeout: 10_000 });
  const stopAfter = await page.$eval("#stop", (b) => ({ disabled: b.disabled, title: b.title }));
  await shot(page, "login.png", { viewport: true });
  console.log(`logins: sockets before the login ${socketsBefore}, then ${socketAfter.replace(/[0-9a-f]{64}/, "<token>")}; ` +
    `cookie ${JSON.stringify({ httpOnly: session?.httpOnly, secure: session?.secure, sameSite: session?.sameSite })}; ` +
    `${site}'s lease holder shown as bob; STOP before ${JSON.stringify(stopBefore)}, after the logout ${JSON.stringify(stopAfter)}`);
  assert.equal(socketsBefore, 0, "a socket before the login");
  assert.match(socketAfter, /^wss:\/\/.*\/ws\?csrf=[0-9a-f]{64}$/);
  assert.ok(session && session.httpOnly && session.secure && session.sameSite === "Strict",
    JSON.stringify(session));
  assert.deepEqual(stopBefore, { disabled: true, title: "log in to stop" });
  assert.deepEqual(stopAfter, { disabled: true, title: "log in to stop" });
  assert.deepEqual(errors, []);
  await page.close();
});
