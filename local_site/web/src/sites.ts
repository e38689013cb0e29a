// The sites panel: each remote site's state, breach, lease holder and link round trip;
// clicking a row makes it the active site (the one STOP, plots, 3-D view and tasks act on).
import type { Connection } from "./connection";
import { el, type Store } from "./store";

export function mountSites(root: HTMLElement, conn: Connection, store: Store): void {
  const body = el("tbody");
  const leaseMsg = el("div", { class: "dim", id: "lease-msg" });
  const leaseBtn = el("button", { id: "lease-acquire", text: "take lease of active site" });
  const releaseBtn = el("button", { id: "lease-release", text: "release" });
  root.append(
    el("h2", { text: "sites" }),
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...["site", "state", "lease", "RTT"].map((h) => el("th", { text: h })))),
      body,
    ),
    el("div", { class: "row" }, leaseBtn, releaseBtn),
    leaseMsg,
  );

  const lease = async (acquire: boolean) => {
    try {
      await conn.request({ type: "lease", site: store.activeSite, acquire });
      leaseMsg.textContent = acquire ? `lease of ${store.activeSite} held` : "lease released";
      leaseMsg.className = "ok";
    } catch (e) {
      leaseMsg.textContent = (e as Error).message;
      leaseMsg.className = "bad";
    }
  };
  leaseBtn.addEventListener("click", () => void lease(true));
  releaseBtn.addEventListener("click", () => void lease(false));

  const render = () => {
    const rows: HTMLElement[] = [];
    for (const name of store.siteNames()) {
      const s = store.sites.get(name);
      const tr = el("tr", { class: `site${name === store.activeSite ? " active" : ""}`, "data-site": name });
      const stateCls = !s || !s.connected ? "bad" : s.breach.cause ? "bad" : s.state === "RUNNING" ? "ok" : "";
      tr.append(
        el("td", { text: name }),
        el("td", { class: `${stateCls} site-state`, text: s ? (s.connected ? s.state : "unreachable") : "…" }),
        el("td", { text: s?.lease_holder || "—" }),
        el("td", { text: s?.link_rtt_ms != null ? `${s.link_rtt_ms.toFixed(1)} ms` : "—" }),
      );
      tr.addEventListener("click", () => store.setActive(name));
      rows.push(tr);
      const extra: string[] = [];
      if (s?.task?.name) extra.push(`task ${s.task.name} #${s.task.id}`);
      if (s?.error) extra.push(`unreachable: ${s.error}`);
      if (s?.breach.cause) extra.push(`breach: ${s.breach.cause}${s.breach.detail ? ` — ${s.breach.detail}` : ""}`);
      if (extra.length) {
        rows.push(
          el("tr", {}, el("td", { colspan: "4", class: s?.breach.cause || s?.error ? "bad site-breach" : "dim", text: extra.join("; ") })),
        );
      }
    }
    body.replaceChildren(...rows);
  };
  store.on("hello", render);
  store.on("site", render);
  store.on("active", render);
}
