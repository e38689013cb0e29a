// What the console knows of the sites, kept from the server's messages; the views read it
// and subscribe to the changes they draw.
import type { Connection } from "./connection";
import type { ArmMsg, HelloMsg, SiteMsg, TelemetryMsg, TeleopMsg } from "./protocol";

/** Called with the site the change is about, when there is one. */
type Listener = (site: string) => void;

export class Store {
  hello: HelloMsg | null = null;
  sites = new Map<string, SiteMsg>();
  arms = new Map<string, ArmMsg>();
  telemetry = new Map<string, TelemetryMsg>();
  teleop = new Map<string, TeleopMsg>();
  activeSite = "";
  private listeners = new Map<string, Set<Listener>>();

  constructor(readonly conn: Connection) {
    conn.on("hello", (m) => {
      this.hello = m;
      const names = m.sites.map((s) => s.name);
      // Keep the operator's choice across reconnections when the site still exists.
      const before = this.activeSite;
      if (!names.includes(this.activeSite)) this.activeSite = m.teleop_site || names[0] || "";
      this.emit("hello");
      if (this.activeSite !== before) this.emit("active");
    });
    conn.on("arm", (m) => {
      this.arms.set(m.site, m);
      this.emit("arm", m.site);
    });
    conn.on("site", (m) => {
      this.sites.set(m.name, m);
      this.emit("site", m.name);
    });
    conn.on("telemetry", (m) => {
      this.telemetry.set(m.site, m);
      this.emit("telemetry", m.site);
    });
    conn.on("teleop", (m) => {
      this.teleop.set(m.site, m);
      this.emit("teleop", m.site);
    });
  }

  siteNames(): string[] {
    return this.hello ? this.hello.sites.map((s) => s.name) : [...this.sites.keys()];
  }

  /** A lease reply's holder, shown before the next status poll reports it. */
  setLeaseHolder(site: string, holder: string): void {
    const s = this.sites.get(site);
    if (!s || s.lease_holder === holder) return;
    this.sites.set(site, { ...s, lease_holder: holder });
    this.emit("site", site);
  }

  setActive(name: string): void {
    if (name === this.activeSite) return;
    this.activeSite = name;
    this.emit("active");
  }

  on(topic: "hello" | "arm" | "site" | "telemetry" | "teleop" | "active", l: Listener): void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(l);
  }

  private emit(topic: string, site = ""): void {
    const set = this.listeners.get(topic);
    if (set) for (const l of set) l(site);
  }
}

/** Counters the browser tests read (window.__tetherStats). */
export interface TetherStats {
  telemetry: number;
  plotRedraws: number;
  sceneRenders: number;
  gamepadSent: number;
  heartbeatSent: number;
  /** The 3-D canvas's place, the camera and the arm's points last drawn (for tests). */
  sceneProjection: () => {
    canvasRect: { left: number; top: number; width: number; height: number };
    viewProjection: number[];
    armPoints: [number, number, number][];
  } | null;
  latest: () => TelemetryMsg | null;
  teleopLog: TeleopMsg[];
}

export const stats: TetherStats = {
  telemetry: 0,
  plotRedraws: 0,
  sceneRenders: 0,
  gamepadSent: 0,
  heartbeatSent: 0,
  sceneProjection: () => null,
  latest: () => null,
  teleopLog: [],
};

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Record<string, string>> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}
