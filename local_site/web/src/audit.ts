// The audit trail of the active site, newest first. Lines are the site's JSON records; each
// is shown with its time, person and action when it has them, else as it came.
import type { Connection } from "./connection";
import { el, type Store } from "./store";

const PAGE = 200;

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
  const status = el("span", { class: "dim" });
  const body = el("div", { class: "audit", id: "audit-lines" });
  root.append(el("h2", { text: "audit trail (newest first)" }), el("div", { class: "row" }, refresh, status), body);

  let lines: string[] = [];
  let next = 0;
  let site = "";

  const add = (from: string, more: unknown, nextIndex: unknown) => {
    if (from !== site || !Array.isArray(more)) return;
    lines = lines.concat(more.map(String));
    if (typeof nextIndex === "number") next = nextIndex;
    status.textContent = `${lines.length} records from ${site}`;
    body.replaceChildren(...lines.slice().reverse().map((l) => el("div", { text: describe(l) })));
  };
  // The records come in the request's reply (the ground's way) or as an audit message.
  conn.on("audit", (m) => add(m.site, m.lines, m.next));

  let loading = false;
  /** Fetches the records after the last one shown (all of them on a site change). One at a
   *  time: two in flight would both ask from the same index and show records twice. */
  const load = async () => {
    if (loading) return;
    loading = true;
    try {
      await loadOnce();
    } finally {
      loading = false;
    }
  };
  const loadOnce = async () => {
    if (site !== store.activeSite) {
      site = store.activeSite;
      lines = [];
      next = 0;
      body.replaceChildren();
    }
    if (!site) return;
    try {
      const r = await conn.request({ type: "audit", site, first: next, max: PAGE });
      add(typeof r.site === "string" ? r.site : site, r.lines, r.next);
    } catch (e) {
      status.textContent = (e as Error).message;
    }
  };
  refresh.addEventListener("click", () => void load());
  store.on("active", () => void load());
  store.on("hello", () => void load());
}
