// The STOP button: always in the fixed header, Escape as its shortcut (Space would be eaten
// by the task editor and by focused buttons; Escape works everywhere, even in a textarea).
// STOP needs no lease. Shift (on the key or the click) stops every site. It needs the
// socket, though: while the ground asks for a login this page lacks, it is shown disabled.
// The header also names the logged-in person and holds the logout button (logins on).
//
// Truth rules: the header says what is connected (the ground's socket, and per site whether
// its status answers and its telemetry is live, with the age of the last of it), and STOP
// says where it cannot reach: with the ground's socket closed it reaches nothing (and is
// disabled: the hardware stop is the way then); a site that does not answer is named. A stop's
// outcome follows the site afterwards instead of freezing the state the reply carried.
import type { Connection } from "./connection";
import type { Session } from "./session";
import { clock, el, type Store } from "./store";
import { ageLabel } from "./readout_values";

const STOP_TITLE = "Stop the active site (Shift: every site)";

export function mountHeader(root: HTMLElement, conn: Connection, store: Store, session: Session): void {
  const connState = el("span", { id: "conn", class: "closed", text: "disconnected" });
  const operator = el("span", { id: "operator", class: "dim" });
  const siteSelect = el("select", { id: "active-site", title: "active site" });
  const logout = el("button", { id: "logout", text: "log out", hidden: "" });
  const stopBtn = el("button", { id: "stop", title: STOP_TITLE });
  stopBtn.innerHTML = "STOP <small>(Esc, Shift+Esc: all)</small>";
  const result = el("span", { id: "stop-result" });
  const siteChips = el("span", { id: "site-chips" });
  const reach = el("span", { id: "stop-reach" });
  root.append(
    el("h1", { text: "tether" }),
    el("span", { class: "conn-block" }, el("span", { class: "dim", text: "ground " }), connState),
    siteChips,
    operator,
    logout,
    el("label", { text: "active " }, siteSelect),
    el("span", { class: "spacer" }),
    result,
    el("span", { class: "stop-block" }, stopBtn, reach),
  );

  let groundOpen = false;
  conn.onState((s, detail) => {
    const was = groundOpen;
    groundOpen = s === "open";
    connState.className = s;
    connState.textContent = s === "open" ? "connected" : s === "connecting" ? "connecting…" : "disconnected";
    connState.title = detail;
    if (was && !groundOpen) store.event("refusal", "ground", `connection to the ground lost: ${detail || "closed"}`);
    if (!was && groundOpen) store.event("info", "ground", "connected to the ground");
    showReach();
  });

  /** One chip per site: reachable and live (green), reachable but no telemetry for more
   *  than a second (amber, with its age), unreachable (red, with why). */
  const chips = new Map<string, HTMLElement>();
  const siteStatus = (name: string): { cls: string; text: string; title: string } => {
    const s = store.sites.get(name);
    if (!groundOpen) return { cls: "stale", text: `${name}: ?`, title: "the ground is not connected: nothing here is live" };
    if (!s) return { cls: "stale", text: `${name}: …`, title: "no status yet" };
    if (!store.reachable(name)) {
      const why = s.connected ? ageLabel(store.statusAge(name)).replace("no data", "no status") : s.error || "no answer";
      return { cls: "bad", text: `${name}: unreachable`, title: why };
    }
    if (!store.live(name)) return { cls: "warn", text: `${name}: ${ageLabel(store.telemetryAge(name))}`, title: "the site answers its status but sends no telemetry" };
    return { cls: "ok", text: `${name}: live`, title: `status ${(store.statusAge(name) / 1000).toFixed(1)} s ago, telemetry ${(store.telemetryAge(name) / 1000).toFixed(1)} s ago` };
  };
  const showChips = () => {
    for (const name of store.siteNames()) {
      let chip = chips.get(name);
      if (!chip) {
        chip = el("span", { class: "chip", "data-site": name });
        chip.addEventListener("click", () => store.setActive(name));
        chips.set(name, chip);
        siteChips.append(chip);
      }
      const st = siteStatus(name);
      const cls = `chip ${st.cls}`;
      if (chip.className !== cls) chip.className = cls;
      if (chip.textContent !== st.text) chip.textContent = st.text;
      if (chip.title !== st.title) chip.title = st.title;
    }
  };

  /** Where a STOP cannot reach, under the button. */
  const showReach = () => {
    let text = "";
    let cls = "dim";
    if (!groundOpen) {
      text = "cannot reach the ground: use the hardware stop";
      cls = "bad";
    } else {
      const names = store.siteNames();
      const out = names.filter((n) => !store.reachable(n));
      if (out.length) {
        text = `cannot reach ${out.join(", ")}`;
        cls = "bad";
      } else if (names.length) {
        text = `reaches ${names.join(", ")}`;
      }
    }
    if (reach.textContent !== text) reach.textContent = text;
    if (reach.className !== cls) reach.className = cls;
    const disabled = session.needsLogin || !groundOpen;
    if (stopBtn.disabled !== disabled) stopBtn.disabled = disabled;
    const title = session.needsLogin ? "log in to stop" : !groundOpen ? "no connection to the ground: the page cannot stop anything" : STOP_TITLE;
    if (stopBtn.title !== title) stopBtn.title = title;
  };
  store.on("tick", () => {
    showChips();
    showReach();
    followStop();
  });
  store.on("site", () => {
    showChips();
    showReach();
    followStop();
  });

  const showOperator = () => {
    const who = session.user ?? store.hello?.operator;
    operator.textContent = who ? `operator ${who}` : "";
    logout.hidden = !session.logins || session.user === null;
    showReach();
  };
  session.onChange(showOperator);
  logout.addEventListener("click", () => {
    logout.disabled = true;
    void session.logout().then((err) => {
      logout.disabled = false;
      // The ground closes this session's sockets; closing here too keeps the page from
      // retrying until the next login.
      conn.close();
      if (err) console.error("tether: logout:", err);
    });
  });

  const fillSites = () => {
    const names = store.siteNames();
    siteSelect.replaceChildren(...names.map((n) => el("option", { value: n, text: n })));
    siteSelect.value = store.activeSite;
    showOperator();
    showChips();
  };
  store.on("hello", fillSites);
  store.on("active", () => (siteSelect.value = store.activeSite));
  siteSelect.addEventListener("change", () => store.setActive(siteSelect.value));

  /** The sites the last stop reached and when; the header then shows their state now. */
  let stopped: { sites: string[]; at: number; seenStopped: Set<string> } | null = null;
  /** A site's state from its newest source: telemetry while live, else its status. */
  const stateOf = (site: string): string =>
    (store.live(site) ? store.telemetry.get(site)?.state : undefined) ?? store.sites.get(site)?.state ?? "";
  const followStop = () => {
    if (!stopped) return;
    const parts = stopped.sites.map((site) => {
      if (!store.reachable(site)) return `${site} unreachable`;
      const state = stateOf(site);
      if (state !== "RUNNING") stopped!.seenStopped.add(site);
      return `${site} now ${state}`;
    });
    // Once every stopped site was seen stopped and runs again (a new start), the stop is
    // history: the event view keeps it.
    if (stopped.sites.every((site) => stopped!.seenStopped.has(site) && stateOf(site) === "RUNNING")) {
      stopped = null;
      result.textContent = "";
      return;
    }
    const text = `stop at ${clock(stopped.at)}: ${parts.join(", ")}`;
    if (result.textContent !== text) result.textContent = text;
  };
  const stop = async (all: boolean) => {
    // A stop without a site stops every site, in one message the ground runs at once.
    const what = all ? "every site" : store.activeSite;
    if (session.needsLogin) {
      result.textContent = "log in to stop";
      result.className = "bad";
      return;
    }
    if (!groundOpen) {
      result.textContent = "STOP cannot reach the ground: use the hardware stop";
      result.className = "bad";
      return;
    }
    stopped = null;
    result.textContent = `stopping ${what}…`;
    result.className = "warn";
    try {
      const r = await conn.request(all ? { type: "stop" } : { type: "stop", site: store.activeSite });
      const states = (r.states ?? {}) as Record<string, string>;
      stopped = {
        sites: Object.keys(states).length ? Object.keys(states) : all ? store.siteNames() : [store.activeSite],
        at: Date.now(),
        // Seen stopped only once the page's own view of the site says so: the telemetry may
        // still show RUNNING from before the stop for a moment after the reply.
        seenStopped: new Set<string>(),
      };
      result.className = "ok";
      followStop();
    } catch (e) {
      result.textContent = `stop of ${what} failed: ${(e as Error).message}`;
      result.className = "bad";
      store.event("refusal", all ? "console" : store.activeSite, `STOP failed: ${(e as Error).message}`);
    }
  };
  stopBtn.addEventListener("click", (ev) => void stop(ev.shiftKey));
  window.addEventListener(
    "keydown",
    (ev) => {
      if (ev.key !== "Escape" || ev.repeat) return;
      ev.preventDefault();
      void stop(ev.shiftKey);
    },
    { capture: true },
  );
}
