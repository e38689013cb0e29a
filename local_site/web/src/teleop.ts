// Teleoperation from the browser's Gamepad API (a gamepad or a SpaceMouse): six axes with a
// deadzone, sent at 100 Hz while enabled, plus a heartbeat every 100 ms. The enable needs
// both the on-screen toggle (armed) and the gamepad's enabling button held (a dead-man
// switch): letting go of the button, hiding the tab, leaving the page or losing the socket
// releases it at once, and the ground releases it on its own when heartbeats stop.
import type { Connection } from "./connection";
import type { TeleopMode } from "./protocol";
import { el, stats, type Store } from "./store";
import { ageLabel } from "./readout_values";

// 100 Hz, inside the protocol's 50–125 Hz, independent of requestAnimationFrame (which
// runs slowly or not at all in a busy, headless or background page). On a busy page a timer
// waits behind every long task (a frame of plots and 3-D view takes 15–30 ms on two cores),
// so the pad is read whenever the page gets to run anything: a 4 ms timer, each message
// from the ground (120/s) and the start of each frame. Messages keep a schedule of one every
// 10 ms: a late chance sends at once and the schedule goes on from when it was due, making
// up at most one period (a stalled page never sends a burst).
const POLL_MS = 4;
const SEND_PERIOD_MS = 10;
const HEARTBEAT_MS = 100;
const DEADZONE = 0.08;
/** The enabling button: the standard mapping's right shoulder (R1), or button 0 on devices
 *  without the standard mapping (a SpaceMouse's left button). */
const ENABLE_BUTTON_STANDARD = 5;

function deadzone(v: number): number {
  const a = Math.abs(v);
  if (!Number.isFinite(v) || a < DEADZONE) return 0;
  // Rescaled so the output starts at 0 at the deadzone's edge and still reaches ±1.
  return (Math.sign(v) * (Math.min(a, 1) - DEADZONE)) / (1 - DEADZONE);
}

/** Six velocity axes (vx, vy, vz, wx, wy, wz) from a pad, in -1..1. */
export function padAxes(pad: Gamepad): number[] {
  if (pad.mapping !== "standard" && pad.axes.length >= 6) {
    // A 6-DOF device (SpaceMouse): its axes are already translation then rotation.
    return pad.axes.slice(0, 6).map(deadzone);
  }
  // Standard gamepad: left stick = x/y, triggers = z down/up, right stick = roll/pitch,
  // shoulders L1/R1 are taken (R1 enables), so yaw comes from the d-pad left/right.
  const b = (i: number) => pad.buttons[i]?.value ?? 0;
  const ax = (i: number) => pad.axes[i] ?? 0;
  return [ax(0), -ax(1), b(7) - b(6), -ax(3), ax(2), b(14) - b(15)].map(deadzone);
}

/** Writes text only when it changed: every write costs a layout, and this runs at 250 Hz. */
function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}

function enableHeld(pad: Gamepad): boolean {
  const i = pad.mapping === "standard" ? ENABLE_BUTTON_STANDARD : 0;
  return !!pad.buttons[i]?.pressed;
}

export function mountTeleop(root: HTMLElement, conn: Connection, store: Store): void {
  const armBtn = el("button", { id: "teleop-arm", text: "teleoperation: off" });
  const modeSel = el("select", { id: "teleop-mode" },
    ...(["tool", "world", "camera"] as TeleopMode[]).map((m) => el("option", { value: m, text: m })));
  const padInfo = el("div", { class: "dim", id: "teleop-pad" });
  const axesView = el("div", { class: "axes", id: "teleop-axes" });
  const status = el("div", { id: "teleop-status", class: "dim" });
  root.append(
    el("h2", { text: "teleoperation" }),
    el("div", { class: "row" }, armBtn,
      el("label", { text: "mode ", title: "sent with the enable; in protocol v1 the ground keeps its --mode and echoes this" }, modeSel)),
    padInfo,
    axesView,
    status,
    el("div", { class: "dim", text: "hold the pad's enabling button (R1; a SpaceMouse's left button) while armed" }),
  );

  let armed = false;
  let enabled = false; // what this page asked for last
  let site = "";
  let seq = 0;

  const setArmed = (on: boolean) => {
    armed = on;
    armBtn.textContent = `teleoperation: ${on ? "armed" : "off"}`;
    armBtn.classList.toggle("on", on);
  };

  const request = (enable: boolean) => {
    enabled = enable;
    if (!site) return;
    conn.request({ type: "teleop", site, enable, mode: modeSel.value }).catch((e: Error) => {
      status.textContent = `teleop ${enable ? "enable" : "disable"} refused: ${e.message}`;
      status.className = "bad";
      if (enable) {
        enabled = false;
        setArmed(false);
      }
    });
  };

  /** Immediate release: no waiting for a reply, since the page may be going away. */
  const releaseNow = (hidden: boolean) => {
    if (hidden) conn.send({ type: "visibility", hidden: true });
    if (enabled) {
      conn.send({ type: "teleop", id: 0, site, enable: false, mode: modeSel.value });
      enabled = false;
    }
    setArmed(false);
  };

  armBtn.addEventListener("click", () => {
    setArmed(!armed);
    if (!armed && enabled) request(false);
  });
  modeSel.addEventListener("change", () => {
    if (enabled) request(true);
  });
  // The ground teleoperates one site, chosen when it starts (hello's teleop_site); STOP and
  // the other views follow the active site.
  const siteLabel = el("div", { id: "teleop-site" });
  root.insertBefore(siteLabel, root.children[1]);
  store.on("hello", () => {
    const device = store.hello?.teleop_device ?? "web";
    site = device === "web" ? store.hello?.teleop_site ?? "" : "";
    siteLabel.textContent = site
      ? `site ${site}`
      : `tether-ground's hand controller is '${device}': start it with --device web to teleoperate from here`;
    armBtn.disabled = !site;
    if (!site) setArmed(false);
  });
  // The site's rule for stops: a switch held through a stop moves nothing after the reset.
  const rearm = el("div", { id: "teleop-rearm", class: "bad" });
  status.after(rearm);
  store.on("telemetry", (name) => {
    if (name !== site) return;
    const waiting = store.telemetry.get(site)?.awaiting_release === true;
    rearm.textContent = waiting
      ? "the site stopped: release the enable and press it again (after the reset) to move"
      : "";
  });
  store.on("teleop", () => {
    const t = store.teleop.get(site);
    if (!t) return;
    // A release the operator did not ask for (the site's own stop, a lost heartbeat, a STOP)
    // says why, in the colour of a stop by a bound when the site stopped on one.
    const siteStop = t.reason.startsWith("the site");
    status.textContent = `${t.site}: ${t.enabled ? `enabled (${t.mode})` : "released"}${t.reason ? ` — ${t.reason}` : ""}`;
    status.className = t.enabled ? "ok" : siteStop && !/operator stop/.test(t.reason) ? "bad" : t.reason && t.reason !== "released" ? "warn" : "dim";
    if (!t.enabled && t.reason && t.reason !== "released") {
      store.event(siteStop && !/operator stop/.test(t.reason) ? "breach" : "info", t.site, `teleoperation released: ${t.reason}`);
    }
    if (!t.enabled && (enabled || armed) && t.reason && t.reason !== "released") {
      // The ground released it (the site stopped, heartbeat, stop…): disarm so moving again
      // takes a deliberate re-arm.
      enabled = false;
      setArmed(false);
    }
  });
  // The panel's data is the teleoperated site's telemetry: greyed with its age when stale.
  const age = el("div", { class: "age", id: "teleop-age" });
  rearm.after(age);
  store.on("tick", () => {
    if (!site) return;
    const live = store.live(site);
    root.classList.toggle("stale", !live);
    setText(age, live ? "" : `${site}: ${ageLabel(store.telemetryAge(site))}`);
  });
  conn.onState((s) => {
    if (s !== "open") {
      enabled = false;
      setArmed(false);
    }
  });

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") releaseNow(true);
  });
  window.addEventListener("pagehide", () => releaseNow(true));
  window.addEventListener("beforeunload", () => releaseNow(true));

  setInterval(() => {
    if (conn.send({ type: "heartbeat", seq: ++seq })) stats.heartbeatSent++;
  }, HEARTBEAT_MS);

  let lastShown = 0;
  let due = 0; // when the next gamepad message is due
  const pump = () => {
    const now = performance.now();
    if (now < due) return;
    // Disarmed, nothing is sent: the pad is read only for the readout, at 10 Hz.
    if (!armed && !enabled && now - lastShown < 100) return;
    due = Math.max(due + SEND_PERIOD_MS, now - SEND_PERIOD_MS);
    const pads = navigator.getGamepads ? navigator.getGamepads() : [];
    const pad = [...pads].find((p): p is Gamepad => !!p && p.connected);
    if (!pad) {
      lastShown = now;
      setText(padInfo, "no gamepad (press a button on it to make the browser show it)");
      if (enabled) request(false);
      return;
    }
    const axes = padAxes(pad);
    const want = !!site && armed && enableHeld(pad) && document.visibilityState === "visible";
    if (want !== enabled) request(want);
    if (enabled && conn.send({ type: "gamepad", seq: ++seq, t: now / 1000, axes, enable: true })) {
      stats.gamepadSent++;
    }
    if (now - lastShown > 100) {
      // The readout at 10 Hz: enough to read, and no layout work at 100 Hz.
      lastShown = now;
      setText(padInfo, `${pad.id} (${pad.mapping || "no standard mapping"}) · enable ${enableHeld(pad) ? "held" : "released"}`);
      setText(axesView, ["vx", "vy", "vz", "wx", "wy", "wz"].map((n, i) => `${n} ${axes[i].toFixed(2)}`).join("  "));
    }
  };
  setInterval(pump, POLL_MS);
  conn.on("telemetry", pump);
  // Mounted before the plots and the 3-D view, so this runs first in each frame.
  const frame = () => {
    requestAnimationFrame(frame);
    if (armed || enabled) pump();
  };
  requestAnimationFrame(frame);
}
