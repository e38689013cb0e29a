// The STOP button: always in the fixed header, Escape as its shortcut (Space would be eaten
// by the task editor and by focused buttons; Escape works everywhere, even in a textarea).
// STOP needs no lease. Shift (on the key or the click) stops every site.
import type { Connection } from "./connection";
import { el, type Store } from "./store";

export function mountHeader(root: HTMLElement, conn: Connection, store: Store): void {
  const connState = el("span", { id: "conn", class: "closed", text: "disconnected" });
  const operator = el("span", { id: "operator", class: "dim" });
  const siteSelect = el("select", { id: "active-site", title: "active site" });
  const stopBtn = el("button", { id: "stop", title: "Stop the active site (Shift: every site)" });
  stopBtn.innerHTML = "STOP <small>(Esc, Shift+Esc: all)</small>";
  const result = el("span", { id: "stop-result" });
  root.append(
    el("h1", { text: "tether" }),
    connState,
    operator,
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

  const fillSites = () => {
    const names = store.siteNames();
    siteSelect.replaceChildren(...names.map((n) => el("option", { value: n, text: n })));
    siteSelect.value = store.activeSite;
    operator.textContent = store.hello ? `operator ${store.hello.operator}` : "";
  };
  store.on("hello", fillSites);
  store.on("active", () => (siteSelect.value = store.activeSite));
  siteSelect.addEventListener("change", () => store.setActive(siteSelect.value));

  const stop = async (all: boolean) => {
    // A stop without a site stops every site, in one message the ground runs at once.
    const what = all ? "every site" : store.activeSite;
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
