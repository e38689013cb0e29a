// What the browser tests share: the browser's launch, a console page with its telemetry
// flowing, screenshots, and the operator's common steps (tests/browser/run.sh runs them).
import fs from "node:fs";
import path from "node:path";
import puppeteer from "puppeteer-core";

export const url = process.env.TETHER_CONSOLE_URL;
// By default beside the build trees (the repository's build/), wherever the test runs from.
export const artifacts =
  process.env.TETHER_ARTIFACTS ?? path.resolve(path.dirname(new URL(import.meta.url).pathname), "../../build/browser-artifacts");
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
if (!url) throw new Error("TETHER_CONSOLE_URL is not set (run tests/browser/run.sh)");
fs.mkdirSync(artifacts, { recursive: true });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Debian's chromium, headless, with the flags the console tests run under. */
export function launch() {
  return puppeteer.launch({
    executablePath: chromium,
    headless: true, // the new headless mode
    // The ground with logins serves HTTPS with the test PKI's certificate, whose CA this
    // browser does not know.
    acceptInsecureCerts: true,
    args: [
      "--no-sandbox", // CI runs as root
      // WebGL on the CPU: ANGLE over SwiftShader.
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      // Composite and draw 2-D canvases on the CPU as well: through SwiftShader the plots'
      // canvases and the WebGL canvas together held the page to ~18 frames/s on 2 cores;
      // in software they run at 60.
      "--disable-gpu-compositing",
      "--disable-accelerated-2d-canvas",
      // No outside network on CI machines: nothing in the background tries to reach it.
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** A console page, loaded and connected, with the active site's telemetry flowing. */
export async function openConsole(browser, { gamepad = null, width = 1500, height = 1100 } = {}) {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  if (gamepad) {
    // A scripted Gamepad API: the test changes window.__pad to move the sticks and buttons.
    await page.evaluateOnNewDocument((pad) => {
      window.__pad = pad;
      navigator.getGamepads = () => [
        {
          id: "scripted gamepad (tests/browser)",
          index: 0,
          connected: true,
          mapping: window.__pad.mapping,
          timestamp: performance.now(),
          axes: window.__pad.axes.slice(),
          buttons: window.__pad.buttons.map((v) => ({ pressed: v > 0.5, touched: v > 0, value: v })),
        },
      ];
    }, gamepad);
  }
  await page.goto(url, { waitUntil: "load" });
  await page.waitForFunction(() => window.__tetherStats && window.__tetherStats.latest() !== null, {
    timeout: 20_000,
  });
  return { page, errors };
}

/** The whole page, or with `viewport` the screen an operator sees first; from the top either
 *  way (a click may have scrolled it, and the fixed header would then sit mid-picture). */
export async function shot(page, name, { viewport = false } = {}) {
  const file = path.join(artifacts, name);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: file, fullPage: !viewport });
  return file;
}

export const latest = (page) => page.evaluate(() => window.__tetherStats.latest());

/** Largest displacement of any arm point between two telemetry messages [m]. */
export function moved(a, b) {
  let d = 0;
  for (let i = 0; i < Math.min(a.points.length, b.points.length); i++) {
    d = Math.max(d, Math.hypot(...a.points[i].map((v, k) => v - b.points[i][k])));
  }
  return d;
}

/** Waits for fn(arg) to hold in the page; on a timeout the error quotes the page's header,
 *  run controls and task result, which usually say why. */
export async function waitFor(page, fn, arg, timeout = 15_000) {
  try {
    await page.waitForFunction(fn, { timeout, polling: 50 }, arg);
  } catch (e) {
    const seen = await page
      .evaluate(() =>
        ["#stop-result", "#stop-reach", "#run-state", "#run-breach", "#run-result", "#task-result", "#lease-msg"]
          .map((s) => `${s}: ${document.querySelector(s)?.textContent ?? "(none)"}`)
          .join(" | "),
      )
      .catch(() => "(page gone)");
    throw new Error(`${e.message} waiting for ${fn.toString().slice(0, 160)} (${JSON.stringify(arg)}); page: ${seen}`);
  }
}

/** Takes the site's control lease with its row's button in the sites view, unless the
 *  page's operator holds it already (the button then offers to release it). */
export async function takeControl(page, site) {
  const button = `.site[data-site="${site}"] button.lease`;
  await waitFor(page, (b) => !!document.querySelector(b) && !document.querySelector(b).disabled, button);
  if ((await page.$eval(button, (b) => b.textContent)) === "release") return;
  await page.click(button);
  await waitFor(page, (b) => document.querySelector(b).textContent === "release" &&
    /held/.test(document.querySelector("#lease-msg").textContent), button);
}
