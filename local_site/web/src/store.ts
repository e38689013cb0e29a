// What the console knows of the sites, kept from the server's messages; the views read it
// and subscribe to the changes they draw.
import type { Connection } from "./connection";
import { staleAfterMs } from "./readout_values";
import type { ArmMsg, HelloMsg, SiteMsg, TelemetryMsg, TeleopMsg } from "./protocol";

/** Called with the site the change is about, when there is one. */
type Listener = (site: string) => void;

/** The severities of the event view: a stop by a bound, a refused call, a change of a
 *  lease, everything else. */
export type Severity = "breach" | "refusal" | "lease" | "info";

/** One line of the event view: from a site's audit trail or from this page. */
export interface ConsoleEvent {
  /** Wall-clock time [ms since the epoch]. */
  time: number;
  severity: Severity;
  /** The site it is about, or "console" / "ground" for the page's own. */
  source: string;
  text: string;
}

/** A task stored on a site (list_tasks). */
export interface StoredTask {
  name: string;
  revision: number;
  summary: string;
}

/** The site messages come with the status poll, once a second: stale after three of its
 *  periods [ms]. (Telemetry: staleAfterMs, 1 s or three periods of a slower stream.) */
export const STATUS_STALE_MS = 3000;

export class Store {
  hello: HelloMsg | null = null;
  sites = new Map<string, SiteMsg>();
  arms = new Map<string, ArmMsg>();
  telemetry = new Map<string, TelemetryMsg>();
  teleop = new Map<string, TeleopMsg>();
  activeSite = "";
  /** When each site's last telemetry and last site message arrived (performance.now()). */
  telemetryAt = new Map<string, number>();
  siteAt = new Map<string, number>();
  /** The page's own events (connection, leases, stops), newest last; the event view adds
   *  the sites' audit trails. */
  events: ConsoleEvent[] = [];
  /** The tasks stored on each site, as the last list_tasks said. */
  storedTasks = new Map<string, StoredTask[]>();
  /** Asks the library for the active site's stored tasks again (set by the task view). */
  reloadTasks: () => void = () => {};
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
      const before = this.sites.get(m.name);
      if (before && before.connected !== m.connected) {
        this.event(m.connected ? "info" : "refusal", m.name,
          m.connected ? "reachable again" : `unreachable: ${m.error || "no answer"}`);
      }
      this.sites.set(m.name, m);
      this.siteAt.set(m.name, performance.now());
      this.emit("site", m.name);
    });
    conn.on("telemetry", (m) => {
      this.telemetry.set(m.site, m);
      this.telemetryAt.set(m.site, performance.now());
      this.emit("telemetry", m.site);
    });
    // Ages grow without messages: the views redraw theirs four times a second.
    setInterval(() => this.emit("tick"), 250);
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

  /** How long ago the site's telemetry arrived [ms]; Infinity when none did. */
  telemetryAge(site: string): number {
    const at = this.telemetryAt.get(site);
    return at === undefined ? Infinity : performance.now() - at;
  }

  /** How long ago the site's last status (site message) arrived [ms]; Infinity when none. */
  statusAge(site: string): number {
    const at = this.siteAt.get(site);
    return at === undefined ? Infinity : performance.now() - at;
  }

  /** Whether the site's telemetry is live: arrived within staleAfterMs of the stream's rate.
   *  The one rule every view applies. */
  live(site: string): boolean {
    return this.telemetryAge(site) <= staleAfterMs(this.hello?.telemetry_hz);
  }

  /** Whether the site answers: its last status said so and is recent. */
  reachable(site: string): boolean {
    return !!this.sites.get(site)?.connected && this.statusAge(site) <= STATUS_STALE_MS;
  }

  /** The task the run controls offer to start (the one just uploaded). */
  pickedTask = "";
  pickTask(name: string): void {
    this.pickedTask = name;
    this.emit("pick");
  }

  setStoredTasks(site: string, tasks: StoredTask[]): void {
    this.storedTasks.set(site, tasks);
    this.emit("tasks", site);
  }

  /** Adds one of the page's own events to the event view. */
  event(severity: Severity, source: string, text: string): void {
    this.events.push({ time: Date.now(), severity, source, text });
    if (this.events.length > 500) this.events.splice(0, this.events.length - 500);
    this.emit("event", source);
  }

  on(topic: "hello" | "arm" | "site" | "telemetry" | "teleop" | "active" | "tick" | "event" | "tasks" | "pick", l: Listener): void {
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
  /** Lease renewals this page sent. */
  leaseRenewals: number;
  plotRedraws: number;
  sceneRenders: number;
  /** Bodies of the site's scene the 3-D view draws (obstacles aside). */
  sceneBodies: number;
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
  leaseRenewals: 0,
  plotRedraws: 0,
  sceneRenders: 0,
  sceneBodies: 0,
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

/** The wall-clock time of day, HH:MM:SS. */
export function clock(t: number = Date.now()): string {
  return new Date(t).toTimeString().slice(0, 8);
}
