// The audit trail of the active site, newest first. Lines are the site's JSON records; each
// is shown with its time, person and action when it has them, else as it came. It refreshes
// by itself every 2 s while the page is visible, and at once when the active site's state or
// task changes (a start, stop or reset writes a record); each refresh asks only for the
// records after the last one shown and adds them at the top.
import type { Connection } from "./connection";
import { el, type Store } from "./store";

const PAGE = 200;
const REFRESH_MS = 2000;
/** Records kept on screen: the oldest go first beyond this, keeping the page light. */
const MAX_SHOWN = 2000;

function describe(line: string): string {
  try {
    const r = JSON.parse(line) as Record<string, unknown>;
    return Object.entries(r)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join("  ");
  } catch {
    return line;
  }
}

export function mountAudit(root: HTMLElement, conn: Connection, store: Store): void {
  const refresh = el("button", { id: "audit-refresh", text: "refresh" });
  const status = el("span", { class: "dim", id: "audit-status" });
  const body = el("div", { class: "audit", id: "audit-lines" });
  root.append(el("h2", { text: "audit trail (newest first)" }), el("div", { class: "row" }, refresh, status), body);

  let count = 0;
  let next = 0;
  let site = "";

  const add = (from: string, more: unknown, nextIndex: unknown): number => {
    if (from !== site || !Array.isArray(more)) return 0;
    if (typeof nextIndex === "number") next = nextIndex;
    else next += more.length;
    if (more.length) {
      count += more.length;
      // Newest first: the new records, last one on top, above those already shown.
      const rows = more.map((l) => el("div", { text: describe(String(l)) })).reverse();
      body.prepend(...rows);
      while (body.childElementCount > MAX_SHOWN) body.lastElementChild?.remove();
    }
    status.textContent = `${count} records from ${site}`;
    return more.length;
  };
  // The records come in the request's reply (the ground's way) or as an audit message.
  conn.on("audit", (m) => void add(m.site, m.lines, m.next));

  let loading = false;
  let again = false;
  /** Fetches the records after the last one shown (all of them on a site change). One at a
   *  time: two in flight would both ask from the same index and show records twice; a call
   *  while one runs makes it fetch once more when done. */
  const load = async () => {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        // A full page means more are waiting: fetch on until a page comes back short.
        while (await loadOnce());
      } while (again);
    } finally {
      loading = false;
    }
  };
  /** One page; true when it was full and moved the index on (more records are waiting). */
  const loadOnce = async (): Promise<boolean> => {
    if (site !== store.activeSite) {
      site = store.activeSite;
      count = 0;
      next = 0;
      body.replaceChildren();
      status.textContent = "";
    }
    if (!site || conn.state !== "open") return false;
    const asked = site;
    const from = next;
    try {
      const r = await conn.request({ type: "audit", site: asked, first: next, max: PAGE });
      // The operator may have switched sites meanwhile: these records are of the old one.
      if (asked !== site) return false;
      return add(typeof r.site === "string" ? r.site : asked, r.lines, r.next) === PAGE && next > from;
    } catch (e) {
      status.textContent = (e as Error).message;
      return false;
    }
  };
  refresh.addEventListener("click", () => void load());
  store.on("active", () => void load());
  store.on("hello", () => void load());

  // A change of the active site's state or task is worth a look at once.
  let seen = "";
  store.on("site", (name) => {
    if (name !== store.activeSite) return;
    const s = store.sites.get(name);
    const key = s ? `${name} ${s.state} ${s.task?.name ?? ""} ${s.task?.id ?? ""} ${s.lease_holder}` : "";
    if (key === seen) return;
    const first = seen === "";
    seen = key;
    if (!first) void load();
  });
  setInterval(() => {
    if (document.visibilityState === "visible") void load();
  }, REFRESH_MS);
}
