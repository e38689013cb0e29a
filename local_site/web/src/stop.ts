// The STOP button: always in the fixed header, Escape as its shortcut (Space would be eaten
// by the task editor and by focused buttons; Escape works everywhere, even in a textarea).
// STOP needs no lease. Shift (on the key or the click) stops every site. It needs the
// socket, though: while the ground asks for a login this page lacks, it is shown disabled.
// The header also names the logged-in person and holds the logout button (logins on).
import type { Connection } from "./connection";
import type { Session } from "./session";
import { el, type Store } from "./store";

const STOP_TITLE = "Stop the active site (Shift: every site)";

export function mountHeader(root: HTMLElement, conn: Connection, store: Store, session: Session): void {
  const connState = el("span", { id: "conn", class: "closed", text: "disconnected" });
  const operator = el("span", { id: "operator", class: "dim" });
  const siteSelect = el("select", { id: "active-site", title: "active site" });
  const logout = el("button", { id: "logout", text: "log out", hidden: "" });
  const stopBtn = el("button", { id: "stop", title: STOP_TITLE });
  stopBtn.innerHTML = "STOP <small>(Esc, Shift+Esc: all)</small>";
  const result = el("span", { id: "stop-result" });
  root.append(
    el("h1", { text: "tether" }),
    connState,
    operator,
    logout,
    el("label", { text: "active site " }, siteSelect),
    el("span", { class: "spacer" }),
    result,
    stopBtn,
  );

  conn.onState((s, detail) => {
    connState.className = s;
    connState.textContent = s === "open" ? "connected" : s;
    connState.title = detail;
    if (s === "closed") connState.textContent = detail;
  });

  const showOperator = () => {
    const who = session.user ?? store.hello?.operator;
    operator.textContent = who ? `operator ${who}` : "";
    logout.hidden = !session.logins || session.user === null;
    stopBtn.disabled = session.needsLogin;
    stopBtn.title = session.needsLogin ? "log in to stop" : STOP_TITLE;
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
  };
  store.on("hello", fillSites);
  store.on("active", () => (siteSelect.value = store.activeSite));
  siteSelect.addEventListener("change", () => store.setActive(siteSelect.value));

  const stop = async (all: boolean) => {
    // A stop without a site stops every site, in one message the ground runs at once.
    const what = all ? "every site" : store.activeSite;
    if (session.needsLogin) {
      result.textContent = "log in to stop";
      result.className = "bad";
      return;
    }
    result.textContent = `stopping ${what}…`;
    result.className = "warn";
    try {
      const r = await conn.request(all ? { type: "stop" } : { type: "stop", site: store.activeSite });
      const states = (r.states ?? {}) as Record<string, string>;
      const parts = Object.entries(states).map(([site, state]) => `${site} ${state}`);
      result.textContent = `stop: ${parts.length ? parts.join(", ") : `sent to ${what}`}`;
      result.className = "ok";
    } catch (e) {
      result.textContent = `stop of ${what} failed: ${(e as Error).message}`;
      result.className = "bad";
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
