// The task library of the active site: list, view, edit, validate (preview), diff against
// the stored revision, upload, start / stop / reset, set one parameter of the running task,
// and the task commands with their arguments. Validation errors are shown at their field:
// the editor's line holding the field is marked and each message is listed.
import type { Connection } from "./connection";
import { RequestError, type FieldError, type ReplyMsg } from "./protocol";
import { el, type Store } from "./store";

interface PathSegment {
  name: string;
  index: number;
}

/** "behaviours[2].stiffness" → behaviours #2, stiffness; null when it is not a field path. */
export function parseFieldPath(path: string): PathSegment[] | null {
  const segs: PathSegment[] = [];
  for (const part of path.split(".")) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$/.exec(part);
    if (!m) return null;
    segs.push({ name: m[1], index: m[2] ? Number(m[2]) : 0 });
  }
  return segs.length ? segs : null;
}

/**
 * The 0-based line of `text` that holds the field at `path`, walking the path's segments in
 * order (the k-th occurrence for a repeated field's index k). When a segment is absent (a
 * field left at its default), the line of the deepest segment found is the closest place;
 * -1 when not even the first is there.
 */
export function lineOfField(text: string, path: string): number {
  const segs = parseFieldPath(path);
  if (!segs) return -1;
  let offset = 0;
  let found = -1;
  for (const seg of segs) {
    // A textproto field: `name:` or `name {` or `name <`, not part of a longer identifier.
    const re = new RegExp(`(^|[^A-Za-z0-9_])${seg.name}\\s*[:{<]`, "gm");
    re.lastIndex = offset;
    let m: RegExpExecArray | null = null;
    for (let k = 0; k <= seg.index; k++) {
      m = re.exec(text);
      if (!m) break;
    }
    if (!m) break;
    found = m.index + m[1].length;
    offset = found + seg.name.length;
  }
  if (found < 0) return -1;
  return text.slice(0, found).split("\n").length - 1;
}

function fmt(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

/** The preview's result: its text report, and the breach it ran into, if any. */
function fmtPreview(p: unknown): string {
  if (p && typeof p === "object" && "text" in p) {
    const r = p as { text: string; breach?: string | null };
    return r.text + (r.breach ? `\nbreach in the preview: ${r.breach}` : "");
  }
  return fmt(p);
}

interface CommandArgument {
  name: string;
  help?: string;
  unit?: string;
  allowed?: string;
  default?: string;
  required?: boolean;
}

/** One command argument as a line: name [unit], what it allows, its default, its help. */
function fmtArgument(a: unknown): string {
  if (typeof a !== "object" || a === null) return String(a);
  const x = a as CommandArgument;
  const parts = [`${x.name}${x.unit ? ` [${x.unit}]` : ""}`];
  if (x.allowed) parts.push(x.allowed);
  if (x.required) parts.push("required");
  else if (x.default) parts.push(`default ${x.default}`);
  return parts.join(", ") + (x.help ? ` — ${x.help}` : "");
}

export function mountTasks(root: HTMLElement, conn: Connection, store: Store): void {
  const list = el("ul");
  const refresh = el("button", { text: "refresh", id: "tasks-refresh" });
  const nameInput = el("input", { id: "task-name", title: "the task's name on the site", size: "16" });
  const gutter = el("div", { class: "gutter", id: "editor-gutter" });
  const textarea = el("textarea", { id: "task-text", spellcheck: "false", wrap: "off" });
  const editor = el("div", { class: "editor" }, gutter, textarea);
  const btn = (id: string, text: string) => el("button", { id, text });
  const validateBtn = btn("task-validate", "validate (preview)");
  const diffBtn = btn("task-diff", "diff against stored");
  const uploadBtn = btn("task-upload", "upload");
  const startBtn = btn("task-start", "start");
  const stopBtn = btn("task-stop", "stop");
  const resetBtn = btn("task-reset", "reset");
  // Recovery (a pendant's "move out of limit"): a joint jog out of a joint-limit stop, or a
  // retreat along the breached quantity's gradient (proximity, singularity).
  const recoverJoint = el("input", { id: "recover-joint", title: "the joint in its limit margin, 1-7; empty: a retreat", size: "2" });
  const recoverBy = el("input", { id: "recover-by", title: "signed angle [rad] for a jog; distance [m] or [rad] for a retreat, at most 0.5", size: "6" });
  const recoverBtn = btn("task-recover", "recover");
  const errorsList = el("ul", { class: "errors", id: "task-errors" });
  const result = el("div", { class: "msg", id: "task-result" });
  const paramPath = el("input", { id: "param-path", title: "a field path, e.g. force_control.reference_wrench.torque.x", size: "28" });
  const paramValue = el("input", { id: "param-value", title: "its new value", size: "10" });
  const paramBtn = btn("param-set", "set parameter");
  const commandsBody = el("tbody", { id: "commands" });

  root.append(
    el("h2", { text: "task library" }),
    el(
      "div",
      { class: "task-grid" },
      el("div", { class: "task-list" }, el("div", { class: "row" }, refresh), list),
      el(
        "div",
        {},
        el("div", { class: "row" }, el("label", { text: "name " }, nameInput), validateBtn, diffBtn, uploadBtn),
        editor,
        errorsList,
        el("div", { class: "row" }, el("span", { text: "run:" }), startBtn, stopBtn, resetBtn),
        el(
          "div",
          { class: "row" },
          el("span", { text: "way back:" }),
          el("label", { text: "joint " }, recoverJoint),
          el("label", { text: "by " }, recoverBy),
          recoverBtn,
        ),
        el(
          "div",
          { class: "row" },
          el("label", { text: "field " }, paramPath),
          el("label", { text: "value " }, paramValue),
          paramBtn,
        ),
        result,
      ),
    ),
    el("h2", { text: "task commands" }),
    el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...["command", "summary", "arguments"].map((h) => el("th", { text: h })))),
      commandsBody,
    ),
  );

  let stored: { task: string; text: string } | null = null;
  let errorLines = new Set<number>();

  // The gutter holds one number per line; the textarea grows to its content so the
  // container scrolls both together.
  const layout = () => {
    const n = textarea.value.split("\n").length;
    const nums: HTMLElement[] = [];
    for (let i = 0; i < n; i++) {
      nums.push(el("div", { class: errorLines.has(i) ? "err" : "", "data-line": String(i + 1), text: String(i + 1) }));
    }
    gutter.replaceChildren(...nums);
    textarea.style.height = "auto";
    textarea.style.height = `${textarea.scrollHeight}px`;
  };
  textarea.addEventListener("input", () => {
    // Edited text no longer matches the errors' lines.
    errorLines = new Set();
    layout();
  });

  const selectLine = (line: number) => {
    const lines = textarea.value.split("\n");
    const start = lines.slice(0, line).reduce((a, l) => a + l.length + 1, 0);
    textarea.focus();
    textarea.setSelectionRange(start, start + (lines[line]?.length ?? 0));
  };

  const showErrors = (errors: FieldError[], fallback: string) => {
    errorLines = new Set();
    const items: HTMLElement[] = [];
    const shown = errors.length ? errors : [{ field: "", message: fallback }];
    for (const e of shown) {
      const line = e.field ? lineOfField(textarea.value, e.field) : -1;
      if (line >= 0) errorLines.add(line);
      const li = el("li", { "data-field": e.field, "data-line": line >= 0 ? String(line + 1) : "" });
      if (e.field) li.append(el("code", { text: e.field }), " ");
      if (line >= 0) li.append(el("span", { class: "dim", text: `(line ${line + 1}) ` }));
      li.append(e.message);
      if (line >= 0) li.addEventListener("click", () => selectLine(line));
      items.push(li);
    }
    errorsList.replaceChildren(...items);
    layout();
  };
  const clearErrors = () => showErrors([], "");

  /** Runs a request, showing its outcome; errors with fields go to the editor. */
  const run = async (what: string, msg: Record<string, unknown>, onOk?: (r: ReplyMsg) => string) => {
    result.textContent = `${what}…`;
    result.className = "msg dim";
    try {
      const r = await conn.request(msg);
      errorsList.replaceChildren();
      errorLines = new Set();
      layout();
      result.textContent = onOk ? onOk(r) : `${what}: done`;
      result.className = "msg ok";
      return r;
    } catch (e) {
      const err = e as Error;
      result.textContent = `${what}: ${err.message}`;
      result.className = "msg bad";
      if (err instanceof RequestError && err.errors.length) showErrors(err.errors, err.message);
      return null;
    }
  };

  const loadList = async () => {
    const site = store.activeSite;
    if (!site) return;
    const r = await run("list tasks", { type: "list_tasks", site }, (r) => `${(r.tasks as unknown[])?.length ?? 0} tasks on ${site}`);
    const tasks = (r?.tasks ?? []) as { name: string; revision: number; summary: string }[];
    list.replaceChildren(
      ...tasks.map((t) => {
        const li = el("li", { "data-task": t.name, title: t.summary, class: stored?.task === t.name ? "sel" : "" },
          el("span", { text: t.name }), el("span", { class: "dim", text: ` r${t.revision}` }));
        li.addEventListener("click", () => void openTask(t.name));
        return li;
      }),
    );
  };

  const openTask = async (task: string) => {
    const r = await run(`get ${task}`, { type: "get_task", site: store.activeSite, task }, () => `${task} loaded`);
    if (!r) return;
    stored = { task, text: String(r.text ?? "") };
    nameInput.value = task;
    textarea.value = stored.text;
    clearErrors();
    for (const li of list.children) li.classList.toggle("sel", (li as HTMLElement).dataset.task === task);
  };

  const taskName = () => nameInput.value.trim() || stored?.task || "";

  refresh.addEventListener("click", () => void loadList());
  validateBtn.addEventListener("click", () =>
    void run("validate", { type: "validate", site: store.activeSite, text: textarea.value }, (r) =>
      `valid${r.preview !== undefined ? `; preview:\n${fmtPreview(r.preview)}` : ""}`),
  );
  diffBtn.addEventListener("click", () =>
    void run("diff", { type: "diff", site: store.activeSite, task: taskName(), text: textarea.value }, (r) => {
      const diff = (r.diff ?? []) as { field: string; old: unknown; new: unknown }[];
      if (!diff.length) return "no difference from the stored revision";
      return diff.map((d) => `${d.field}: ${fmt(d.old)} → ${fmt(d.new)}`).join("\n");
    }),
  );
  uploadBtn.addEventListener("click", async () => {
    const task = taskName();
    const r = await run("upload", { type: "upload", site: store.activeSite, task, text: textarea.value, replace: true }, (r) =>
      `uploaded ${task}${r.revision !== undefined ? ` as revision ${String(r.revision)}` : ""}`);
    if (r) {
      stored = { task, text: textarea.value };
      void loadList();
    }
  });
  startBtn.addEventListener("click", () => void run("start", { type: "start", site: store.activeSite, task: taskName() }));
  stopBtn.addEventListener("click", () => void run("stop", { type: "stop", site: store.activeSite }));
  resetBtn.addEventListener("click", () => void run("reset", { type: "reset", site: store.activeSite }));
  recoverBtn.addEventListener("click", () => {
    const joint = recoverJoint.value.trim();
    const request: Record<string, unknown> = { type: "recover", site: store.activeSite, distance: Number(recoverBy.value) };
    if (joint !== "") request.joint = Number(joint);
    void run("recover", request, (r) => `recovering: ${String(r.motion ?? "")}; reset once it is done`);
  });
  paramBtn.addEventListener("click", () =>
    void run("set parameter", { type: "set_parameter", site: store.activeSite, path: paramPath.value.trim(), value: paramValue.value.trim() },
      () => `${paramPath.value.trim()} = ${paramValue.value.trim()} sent to the running task`),
  );

  const loadCommands = async () => {
    try {
      const r = await conn.request({ type: "commands" });
      const cmds = (r.commands ?? []) as { name: string; summary: string; arguments: unknown[] }[];
      commandsBody.replaceChildren(
        ...cmds.map((c) =>
          el("tr", { "data-command": c.name },
            el("td", { text: c.name }),
            el("td", { text: c.summary }),
            el("td", { class: "msg", text: (c.arguments ?? []).map(fmtArgument).join("\n") }))),
      );
    } catch (e) {
      commandsBody.replaceChildren(el("tr", {}, el("td", { colspan: "3", class: "bad", text: (e as Error).message })));
    }
  };

  store.on("hello", () => {
    void loadList();
    void loadCommands();
  });
  store.on("active", () => {
    stored = null;
    void loadList();
  });
  layout();
}
