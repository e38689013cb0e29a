// The sites panel: each remote site's state, breach, lease holder and link round trip, with
// a button to take or release its control lease; clicking a row makes it the active site
// (the one STOP, plots, 3-D view and tasks act on). Rows are kept and only their changed
// texts rewritten: a rebuilt table on every status message costs a layout each time and
// swallows a click that lands while it is rebuilt.
import type { Connection } from "./connection";
import { el, type Store } from "./store";

interface Row {
  tr: HTMLTableRowElement;
  state: HTMLElement;
  holder: HTMLElement;
  rtt: HTMLElement;
  lease: HTMLButtonElement;
  extraRow: HTMLTableRowElement;
  extra: HTMLElement;
}

function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}
function setClass(e: HTMLElement, cls: string): void {
  if (e.className !== cls) e.className = cls;
}

export function mountSites(root: HTMLElement, conn: Connection, store: Store): void {
  const body = el("tbody");
  const leaseMsg = el("div", { class: "dim", id: "lease-msg" });
  root.append(
    el("h2", { text: "sites" }),
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...["site", "state", "lease", "RTT", ""].map((h) => el("th", { text: h })))),
      body,
    ),
    leaseMsg,
  );

  /** Whether this console's operator holds the site's lease. */
  const mine = (site: string): boolean => {
    const holder = store.sites.get(site)?.lease_holder ?? "";
    return !!holder && holder === store.hello?.operator;
  };

  const lease = async (site: string, acquire: boolean) => {
    leaseMsg.textContent = `${acquire ? "taking control of" : "releasing"} ${site}…`;
    leaseMsg.className = "dim";
    try {
      const r = await conn.request({ type: "lease", site, acquire, force: false });
      const holder = typeof r.lease_holder === "string" ? r.lease_holder : acquire ? store.hello?.operator ?? "" : "";
      store.setLeaseHolder(site, holder);
      leaseMsg.textContent = acquire ? `lease of ${site} held${holder ? ` by ${holder}` : ""}` : `lease of ${site} released`;
      leaseMsg.className = "ok";
    } catch (e) {
      leaseMsg.textContent = `${acquire ? "take control of" : "release of"} ${site} refused: ${(e as Error).message}`;
      leaseMsg.className = "bad";
    }
  };

  const rows = new Map<string, Row>();
  const rowOf = (name: string): Row => {
    let row = rows.get(name);
    if (row) return row;
    const state = el("td");
    const holder = el("td", { class: "lease-holder" });
    const rtt = el("td");
    const leaseBtn = el("button", { class: "lease", "data-site": name });
    const tr = el("tr", { class: "site", "data-site": name },
      el("td", { text: name }), state, holder, rtt, el("td", {}, leaseBtn));
    const extra = el("td", { colspan: "5" });
    const extraRow = el("tr", { class: "site-extra" }, extra);
    tr.addEventListener("click", () => store.setActive(name));
    leaseBtn.addEventListener("click", (ev) => {
      ev.stopPropagation(); // the button acts on its own row, without making it active
      void lease(name, !mine(name));
    });
    row = { tr, state, holder, rtt, lease: leaseBtn, extraRow, extra };
    rows.set(name, row);
    return row;
  };

  const update = (name: string) => {
    const row = rowOf(name);
    const s = store.sites.get(name);
    setClass(row.tr, `site${name === store.activeSite ? " active" : ""}`);
    const stateCls = !s || !s.connected ? "bad" : s.breach.cause ? "bad" : s.state === "RUNNING" ? "ok" : "";
    setClass(row.state, `${stateCls} site-state`);
    setText(row.state, s ? (s.connected ? s.state : "unreachable") : "…");
    setText(row.holder, s?.lease_holder || "—");
    setText(row.rtt, s?.link_rtt_ms != null ? `${s.link_rtt_ms.toFixed(1)} ms` : "—");
    const held = mine(name);
    setText(row.lease, held ? "release" : "take control");
    const other = !held && s?.lease_holder ? `held by ${s.lease_holder}: the site refuses until they release it` : "";
    const title = held ? `release the control lease of ${name}` : other || `take the control lease of ${name}`;
    if (row.lease.title !== title) row.lease.title = title;
    row.lease.disabled = !s;
    const extra: string[] = [];
    if (s?.task?.name) extra.push(`task ${s.task.name} #${s.task.id}`);
    if (s?.error) extra.push(`unreachable: ${s.error}`);
    if (s?.breach.cause) extra.push(`breach: ${s.breach.cause}${s.breach.detail ? ` — ${s.breach.detail}` : ""}`);
    setText(row.extra, extra.join("; "));
    setClass(row.extra, s?.breach.cause || s?.error ? "bad site-breach" : "dim");
    row.extraRow.hidden = extra.length === 0;
  };

  const renderAll = () => {
    const names = store.siteNames();
    for (const [name, row] of rows) {
      if (!names.includes(name)) {
        row.tr.remove();
        row.extraRow.remove();
        rows.delete(name);
      }
    }
    for (const name of names) update(name);
    const order = names.flatMap((n) => [rows.get(n)!.tr, rows.get(n)!.extraRow]);
    if (order.some((e, i) => body.children[i] !== e) || body.children.length !== order.length) {
      body.replaceChildren(...order);
    }
  };
  store.on("hello", renderAll);
  store.on("active", renderAll);
  store.on("site", (name) => (rows.has(name) ? update(name) : renderAll()));
}
