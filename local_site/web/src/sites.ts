// The sites panel: each remote site's state, breach, lease holder and link round trip, with
// a button to take or release its control lease; clicking a site makes it the active site
// (the one STOP, plots, 3-D view and tasks act on). Cards are kept and only their changed
// texts rewritten: a rebuilt list on every status message costs a layout each time and
// swallows a click that lands while it is rebuilt.
//
// Truth rules: a site whose status has not come for three of its periods, or whose telemetry
// stopped for a second, is greyed with the age of what is shown; a lease this page took is
// renewed every 1.5 s (the site lets it lapse after 5 s of silence, so that a vanished console
// does not lock the arm out), and a lapse shows at once, with the site's word for it.
import type { Connection } from "./connection";
import { clock, el, stats, type Store } from "./store";
import { ageLabel } from "./readout_values";

/** Renewal period of a lease this page holds: well inside the site's 5 s lapse. */
const RENEW_MS = 1500;

interface Card {
  root: HTMLElement;
  state: HTMLElement;
  rtt: HTMLElement;
  holder: HTMLElement;
  lease: HTMLButtonElement;
  extra: HTMLElement;
  age: HTMLElement;
}

function setText(e: HTMLElement, text: string): void {
  if (e.textContent !== text) e.textContent = text;
}
function setClass(e: HTMLElement, cls: string): void {
  if (e.className !== cls) e.className = cls;
}

/** The colour of a state: a bound's stop is a breach (red); an operator's stop is not. */
export function stateClass(state: string, cause: string): string {
  if (cause && cause !== "operator stop") return "bad";
  if (cause === "operator stop" || state === "STOPPING" || state === "STOPPED") return "warn";
  return state === "RUNNING" ? "ok" : "";
}

export function mountSites(root: HTMLElement, conn: Connection, store: Store): void {
  const list = el("div", { class: "site-list" });
  const leaseMsg = el("div", { class: "dim", id: "lease-msg" });
  root.append(el("h2", { text: "sites" }), list, leaseMsg);

  /** Whether this console's operator holds the site's lease, as the site last said. */
  const mine = (site: string): boolean => {
    const holder = store.sites.get(site)?.lease_holder ?? "";
    return !!holder && holder === store.hello?.operator;
  };

  /** Leases this page took and renews: site → when it took it [ms since the epoch]. */
  const held = new Map<string, { since: number; renewed: number; inFlight: boolean }>();

  const lapse = (site: string, why: string) => {
    if (!held.delete(site)) return;
    leaseMsg.textContent = `lease of ${site} lapsed at ${clock()}: ${why}`;
    leaseMsg.className = "bad";
    store.event("lease", site, `lease lapsed: ${why}`);
    update(site);
  };

  const lease = async (site: string, acquire: boolean) => {
    leaseMsg.textContent = `${acquire ? "taking control of" : "releasing"} ${site}…`;
    leaseMsg.className = "dim";
    if (!acquire) held.delete(site);
    try {
      const r = await conn.request({ type: "lease", site, acquire, force: false });
      const holder = typeof r.lease_holder === "string" ? r.lease_holder : acquire ? store.hello?.operator ?? "" : "";
      store.setLeaseHolder(site, holder);
      if (acquire) held.set(site, { since: Date.now(), renewed: Date.now(), inFlight: false });
      leaseMsg.textContent = acquire ? `lease of ${site} held${holder ? ` by ${holder}` : ""}, renewed while this page is open` : `lease of ${site} released`;
      leaseMsg.className = "ok";
      store.event("lease", site, acquire ? `lease taken${holder ? ` by ${holder}` : ""}` : "lease released");
    } catch (e) {
      leaseMsg.textContent = `${acquire ? "take control of" : "release of"} ${site} refused: ${(e as Error).message}`;
      leaseMsg.className = "bad";
      store.event("refusal", site, `${acquire ? "lease" : "release"} refused: ${(e as Error).message}`);
    }
  };

  // Renewal: an acquire by the holder renews the lease (the site does not audit renewals).
  setInterval(() => {
    for (const [site, h] of held) {
      if (h.inFlight || Date.now() - h.renewed < RENEW_MS) continue;
      if (conn.state !== "open") continue; // shown by the card; the lapse is the site's to say
      h.inFlight = true;
      conn
        .request({ type: "lease", site, acquire: true, force: false })
        .then((r) => {
          h.inFlight = false;
          h.renewed = Date.now();
          stats.leaseRenewals++;
          if (typeof r.lease_holder === "string") store.setLeaseHolder(site, r.lease_holder);
        })
        .catch((e: Error) => {
          h.inFlight = false;
          lapse(site, `renewal refused: ${e.message}`);
        });
    }
  }, 250);
  // The site's own word: a status that names another holder (or none) after this page's
  // last renewal means the lease is gone, whatever the page thought.
  store.on("site", (name) => {
    const h = held.get(name);
    const s = store.sites.get(name);
    if (!h || !s || !s.connected || h.inFlight) return;
    const polled = s.polled_unix_ms ?? Date.now();
    if (polled < h.renewed + 200) return; // a poll answered before the renewal
    if (s.lease_holder !== store.hello?.operator) {
      lapse(name, s.lease_holder ? `the site says it is held by ${s.lease_holder}` : "the site says nobody holds it");
    }
  });

  const cards = new Map<string, Card>();
  const cardOf = (name: string): Card => {
    let card = cards.get(name);
    if (card) return card;
    const state = el("span", { class: "site-state" });
    const rtt = el("span", { class: "dim rtt" });
    const holder = el("span", { class: "lease-holder" });
    const leaseBtn = el("button", { class: "lease", "data-site": name });
    const extra = el("div", { class: "site-extra" });
    const age = el("div", { class: "age" });
    const root = el("div", { class: "site", "data-site": name },
      el("div", { class: "site-line" }, el("b", { text: name }), state, rtt),
      el("div", { class: "site-line" }, el("span", { class: "dim", text: "lease " }), holder, leaseBtn),
      extra, age);
    root.addEventListener("click", () => store.setActive(name));
    leaseBtn.addEventListener("click", (ev) => {
      ev.stopPropagation(); // the button acts on its own site, without making it active
      void lease(name, !mine(name));
    });
    card = { root, state, rtt, holder, lease: leaseBtn, extra, age };
    cards.set(name, card);
    return card;
  };

  const update = (name: string) => {
    const card = cardOf(name);
    const s = store.sites.get(name);
    const reachable = store.reachable(name);
    const live = store.live(name);
    setClass(card.root, `site${name === store.activeSite ? " active" : ""}${reachable && live ? "" : " stale"}`);
    const cause = s?.breach.cause ?? "";
    setClass(card.state, `${!s || !reachable ? "bad" : stateClass(s.state, cause)} site-state`);
    setText(card.state, s ? (reachable ? s.state : "unreachable") : "…");
    setText(card.rtt, s?.link_rtt_ms != null && reachable ? `${s.link_rtt_ms.toFixed(1)} ms` : "");
    const h = held.get(name);
    setText(card.holder, (s?.lease_holder || "—") + (h && mine(name) ? ` (renewed ${((Date.now() - h.renewed) / 1000).toFixed(1)} s ago)` : ""));
    const isMine = mine(name);
    setText(card.lease, isMine ? "release" : "take control");
    const other = !isMine && s?.lease_holder ? `held by ${s.lease_holder}: the site refuses until they release it` : "";
    const title = isMine ? `release the control lease of ${name}` : other || `take the control lease of ${name}`;
    if (card.lease.title !== title) card.lease.title = title;
    card.lease.disabled = !s || !reachable;
    const extra: string[] = [];
    if (s?.task?.name) extra.push(`task ${s.task.name} #${s.task.id}`);
    if (s && !s.connected && s.error) extra.push(`unreachable: ${s.error}`);
    if (cause) extra.push(`${cause === "operator stop" ? "stopped" : "breach"}: ${cause}${s?.breach.detail ? ` — ${s.breach.detail}` : ""}`);
    setText(card.extra, extra.join("; "));
    setClass(card.extra, `site-extra ${cause && cause !== "operator stop" ? "bad site-breach" : s && !s.connected ? "bad" : "dim"}`);
    // The age of what the card shows: the status poll's and the telemetry's.
    let age = "";
    if (!reachable) age = `status: ${ageLabel(store.statusAge(name))}`;
    else if (!live) age = `telemetry: ${ageLabel(store.telemetryAge(name))}`;
    setText(card.age, age);
  };

  const renderAll = () => {
    const names = store.siteNames();
    for (const [name, card] of cards) {
      if (!names.includes(name)) {
        card.root.remove();
        cards.delete(name);
      }
    }
    for (const name of names) update(name);
    const order = names.map((n) => cards.get(n)!.root);
    if (order.some((e, i) => list.children[i] !== e) || list.children.length !== order.length) {
      list.replaceChildren(...order);
    }
  };
  store.on("hello", renderAll);
  store.on("active", renderAll);
  store.on("tick", renderAll);
  store.on("site", (name) => (cards.has(name) ? update(name) : renderAll()));
}
