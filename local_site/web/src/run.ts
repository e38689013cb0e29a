// Run controls beside the 3-D view, so the operator watches the arm while starting it: the
// active site's state and breach, start (a stored task), stop, reset, and the way back from a
// limit stop (a joint jog, or a retreat along the breached quantity's gradient, as a
// pendant's "move out of limit").
import type { Connection } from "./connection";
import { stateClass } from "./sites";
import { el, type Store } from "./store";
import { ageLabel } from "./readout_values";

export function mountRun(root: HTMLElement, conn: Connection, store: Store): void {
  const siteName = el("b", { id: "run-site" });
  const state = el("span", { id: "run-state", class: "site-state" });
  const breach = el("span", { id: "run-breach" });
  const age = el("span", { class: "age", id: "run-age" });
  const taskInput = el("input", { id: "run-task", list: "run-tasks", size: "18", title: "a task stored on the active site" });
  const taskList = el("datalist", { id: "run-tasks" });
  const btn = (id: string, text: string, title: string) => el("button", { id, text, title });
  const startBtn = btn("task-start", "start", "start the task on the active site (needs its lease)");
  const stopBtn = btn("task-stop", "stop", "stop the active site (STOP in the header stops it too)");
  const resetBtn = btn("task-reset", "reset", "clear a stop once no bound is breached any more");
  const recoverJoint = el("input", { id: "recover-joint", title: "the joint in its limit margin, 1-7; empty: a retreat", size: "2" });
  const recoverBy = el("input", { id: "recover-by", title: "signed angle [rad] for a jog; distance [m] or [rad] for a retreat, at most 0.5", size: "5" });
  const recoverBtn = btn("task-recover", "recover", "move out of the breach that keeps the arm stopped, then reset");
  const result = el("div", { class: "msg", id: "run-result" });
  root.append(
    el("div", { class: "row" }, siteName, state, breach, age),
    el("div", { class: "row" }, el("label", { text: "task " }, taskInput), taskList, startBtn, stopBtn, resetBtn,
      el("span", { class: "sep" }), el("span", { class: "dim", text: "way back: joint" }), recoverJoint,
      el("label", { text: "by " }, recoverBy), recoverBtn),
    result,
  );

  const run = async (what: string, msg: Record<string, unknown>, onOk?: (r: Record<string, unknown>) => string) => {
    result.textContent = `${what}…`;
    result.className = "msg dim";
    try {
      const r = await conn.request(msg);
      result.textContent = onOk ? onOk(r) : `${what}: done`;
      result.className = "msg ok";
    } catch (e) {
      // The site's audit trail has the call and its refusal; the event view shows it.
      result.textContent = `${what}: ${(e as Error).message}`;
      result.className = "msg bad";
    }
  };
  startBtn.addEventListener("click", () => {
    const task = taskInput.value.trim();
    void run(`start ${task}`, { type: "start", site: store.activeSite, task }, (r) => `started ${task} as #${String(r.task_id)}`);
  });
  stopBtn.addEventListener("click", () => void run("stop", { type: "stop", site: store.activeSite }));
  resetBtn.addEventListener("click", () =>
    void run("reset", { type: "reset", site: store.activeSite }, (r) => `reset: ${String(r.message || "accepted")}`));
  recoverBtn.addEventListener("click", () => {
    const joint = recoverJoint.value.trim();
    const request: Record<string, unknown> = { type: "recover", site: store.activeSite, distance: Number(recoverBy.value) };
    if (joint !== "") request.joint = Number(joint);
    void run("recover", request, (r) => `recovering: ${String(r.motion ?? "")}; reset once it is done`);
  });

  const showTasks = () => {
    const tasks = store.storedTasks.get(store.activeSite) ?? [];
    taskList.replaceChildren(...tasks.map((t) => el("option", { value: t.name, text: `r${t.revision} ${t.summary}` })));
  };
  store.on("tasks", showTasks);
  store.on("pick", () => (taskInput.value = store.pickedTask));

  const show = () => {
    const name = store.activeSite;
    const s = store.sites.get(name);
    const t = store.telemetry.get(name);
    const live = store.live(name);
    root.classList.toggle("stale", !live || !store.reachable(name));
    siteName.textContent = name;
    // The state from the newest source: telemetry while live, else the status poll.
    const st = live && t ? t.state : s ? (store.reachable(name) ? s.state : "unreachable") : "…";
    const cause = (live && t ? t.breach?.cause : s?.breach.cause) ?? "";
    const detail = (live && t ? t.breach?.detail : s?.breach.detail) ?? "";
    const task = live && t?.task?.name ? ` ${t.task.name}` : s?.task?.name ? ` ${s.task.name}` : "";
    state.textContent = `${st}${task}`;
    state.className = `site-state ${st === "unreachable" ? "bad" : stateClass(st, cause)}`;
    breach.textContent = cause ? `${cause === "operator stop" ? "stopped by the operator" : `breach: ${cause}`}${detail ? ` — ${detail}` : ""}` : "";
    breach.className = cause && cause !== "operator stop" ? "bad" : "warn";
    age.textContent = live ? "" : ageLabel(store.telemetryAge(name));
    const stopped = st === "STOPPED" || st === "STOPPING";
    resetBtn.classList.toggle("suggest", stopped);
    recoverBtn.classList.toggle("suggest", stopped && !!cause && cause !== "operator stop");
  };
  store.on("tick", show);
  store.on("site", show);
  store.on("active", () => {
    show();
    showTasks();
  });
}
