// The event view: the active site's audit trail and this page's own events (connection,
// leases, stops, teleoperation releases), newest first, each with its severity — breach (a
// bound stopped the arm), refusal (a call or a connection failed), lease, info — and a filter
// by severity and text. The trail refreshes by itself every 2 s while the page is visible,
// and at once when the active site's state, task or lease changes; each refresh asks only for
// the records after the last one shown.
import type { Connection } from "./connection";
import { clock, el, type ConsoleEvent, type Severity, type Store } from "./store";

const PAGE = 200;
const REFRESH_MS = 2000;
/** Records kept on screen: the oldest go first beyond this, keeping the page light. */
const MAX_SHOWN = 2000;
/** Rows drawn at once: the view is rebuilt on each change, and 500 lines is a long read. */
const ROWS_DRAWN = 500;
const SEVERITIES: Severity[] = ["breach", "refusal", "lease", "info"];
const LEASE_CALLS = new Set(["AcquireControl", "ReleaseControl", "LeaseLapsed", "TakeOver"]);

/** One audit record as an event: its severity from the call and the outcome. */
export function auditEvent(site: string, line: string): ConsoleEvent {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { time: Date.now(), severity: "info", source: site, text: line };
  }
  const call = String(r.call ?? "");
  const outcome = String(r.outcome ?? "OK");
  const detail = typeof r.detail === "string" ? r.detail : "";
  let severity: Severity = "info";
  // A breach record is written when a bound stops the arm (an operator's stop is not one).
  if (call === "Breach") severity = /operator stop/.test(detail) ? "info" : "breach";
  else if (LEASE_CALLS.has(call)) severity = outcome === "OK" ? "lease" : "refusal";
  else if (outcome !== "OK") severity = "refusal";
  const parsed = Date.parse(String(r.time ?? ""));
  const who = String(r.identity ?? "");
  const task = typeof r.task === "string" ? ` ${r.task}${r.revision !== undefined ? ` r${String(r.revision)}` : ""}` : "";
  const text = `${who ? `${who} ` : ""}${call}${task}${outcome !== "OK" ? ` → ${outcome}` : ""}${detail ? `: ${detail}` : ""}`;
  return { time: Number.isFinite(parsed) ? parsed : Date.now(), severity, source: site, text };
}

export function mountAudit(root: HTMLElement, conn: Connection, store: Store): void {
  const refresh = el("button", { id: "audit-refresh", text: "refresh" });
  const status = el("span", { class: "dim", id: "audit-status" });
  const boxes = new Map<Severity, HTMLInputElement>();
  const filters = el("span", { class: "filters" });
  for (const sev of SEVERITIES) {
    const box = el("input", { type: "checkbox", "data-severity": sev });
    box.checked = true;
    boxes.set(sev, box);
    filters.append(el("label", { class: `sev-${sev}` }, box, ` ${sev}`));
  }
  const text = el("input", { id: "events-filter", placeholder: "filter", size: "10" });
  const body = el("div", { class: "audit", id: "audit-lines" });
  root.append(el("h2", { text: "events (newest first)" }), el("div", { class: "row" }, filters, text, refresh, status), body);

  let count = 0;
  let next = 0;
  let site = "";
  /** The active site's records and the page's own events, oldest first. */
  let records: ConsoleEvent[] = [];

  const shown = (e: ConsoleEvent): boolean => {
    if (!boxes.get(e.severity)?.checked) return false;
    const f = text.value.trim().toLowerCase();
    return !f || `${e.source} ${e.text}`.toLowerCase().includes(f);
  };
  const row = (e: ConsoleEvent) =>
    el("div", { class: `event sev-${e.severity}`, "data-severity": e.severity },
      el("span", { class: "time", text: clock(e.time) }),
      el("span", { class: "badge", text: e.severity }),
      el("span", { class: "src", text: e.source }),
      el("span", { class: "text", text: e.text }));
  const render = () => {
    // The page's events of this site or of the console and ground, merged by time.
    const own = store.events.filter((e) => e.source === site || e.source === "console" || e.source === "ground");
    const all = [...records, ...own].sort((a, b) => a.time - b.time);
    const rows = all.filter(shown).slice(-ROWS_DRAWN).reverse().map(row);
    body.replaceChildren(...rows);
    status.textContent = `${count} records from ${site}`;
  };
  for (const box of boxes.values()) box.addEventListener("change", render);
  text.addEventListener("input", render);
  store.on("event", render);

  const add = (from: string, more: unknown, nextIndex: unknown): number => {
    if (from !== site || !Array.isArray(more)) return 0;
    if (typeof nextIndex === "number") next = nextIndex;
    else next += more.length;
    if (more.length) {
      count += more.length;
      records.push(...more.map((l) => auditEvent(site, String(l))));
      if (records.length > MAX_SHOWN) records.splice(0, records.length - MAX_SHOWN);
      render();
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
      records = [];
      render();
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

  // A change of the active site's state, task or lease is worth a look at once.
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
