// The operator console: one WebSocket to the ground station (same host, /ws), a store of
// what it said, and one module per view. With logins on (tether-ground --web-users), the
// session is checked first and the socket waits for a login.
import "./style.css";
import { Connection } from "./connection";
import { Store, stats } from "./store";
import { mountHeader } from "./stop";
import { mountSites } from "./sites";
import { mountScene } from "./scene";
import { mountPlots } from "./plots";
import { mountTasks } from "./tasks";
import { mountTeleop } from "./teleop";
import { mountCameras } from "./cameras";
import { mountAudit } from "./audit";
import { mountRun } from "./run";
import { mountReadouts } from "./readouts";
import { Session, mountLogin } from "./session";

declare global {
  interface Window {
    __tetherStats: typeof stats;
  }
}
window.__tetherStats = stats;

// The plots redraw once per animation frame in which a sample arrived. At 30 Hz two samples
// often share a frame and the redraw rate fell to 22 Hz; at 60 Hz the plots redraw at the
// frame rate the machine manages (the 3-D view is capped separately on a software GL).
const TELEMETRY_HZ = 60;
const session = new Session();
// Every (re)connection asks the ground for the session first: a closed socket may mean a
// logout or an expired session, which the login form then asks to renew.
const conn = new Connection(async () => ((await session.check()) ? session.wsUrl() : null));
const store = new Store(conn);
// What the browser tests read besides the counters: the active site's latest telemetry and
// every teleoperation state the ground announced.
stats.latest = () => store.telemetry.get(store.activeSite) ?? null;
stats.teleopLog = [];
conn.on("teleop", (m) => stats.teleopLog.push(m));
const byId = (id: string): HTMLElement => {
  const e = document.getElementById(id);
  if (!e) throw new Error(`index.html lacks #${id}`);
  return e;
};

// Every (re)connection starts with hello; subscribe then, since a new socket has no rate.
conn.on("hello", () => {
  conn.request({ type: "subscribe", rate_hz: TELEMETRY_HZ }).catch((e: Error) => {
    console.error("tether: subscribe refused:", e.message);
  });
});

mountLogin(session, () => conn.start());
mountHeader(byId("header"), conn, store, session);
mountSites(byId("sites"), conn, store);
mountTeleop(byId("teleop"), conn, store);
mountCameras(byId("cameras"), store, session, conn);
mountScene(byId("scene"), store);
mountRun(byId("run"), conn, store);
mountReadouts(byId("readouts"), store);
mountPlots(byId("plots"), store);
mountTasks(byId("tasks"), conn, store);
mountAudit(byId("audit"), conn, store);
conn.start();
